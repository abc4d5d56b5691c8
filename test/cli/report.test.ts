import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { PROBLEM_TYPES, type Problem } from '../../src/api/problem.js';
import type { IO } from '../../src/cli/io/process.js';
import { reportError } from '../../src/cli/io/report.js';
import { ApiError } from '../../src/client/errors.js';

function report(error: unknown): { code: number; stderr: string } {
  let stderr = '';
  const io: IO = {
    stdout: { write: () => true },
    stderr: { write: (chunk: string) => (stderr += chunk) },
    stdin: Readable.from([]) as never,
    env: {},
    cwd: '/',
    signal: new AbortController().signal,
  };
  const code = reportError(error, io, { json: false, debug: false });
  return { code, stderr };
}

const problem = (fields: Partial<Problem>): Problem => ({
  type: PROBLEM_TYPES.badRequest,
  title: 'Bad request',
  status: 400,
  ...fields,
});

describe('reportError on an API problem', () => {
  it('exposes the problem type on the error', () => {
    expect(new ApiError(400, problem({ type: PROBLEM_TYPES.validation })).type).toBe(PROBLEM_TYPES.validation);
  });

  it('says a `validation` problem field by field, whatever its title', () => {
    const error = new ApiError(
      400,
      problem({
        type: PROBLEM_TYPES.validation,
        title: 'Invalid',
        detail: 'Invalid request: name is too long.',
        errors: { name: ['is too long'], type: ['is required'] },
      }),
    );
    expect(report(error)).toEqual({ code: 1, stderr: 'Error: Invalid (400): name: is too long; type: is required\n' });
  });

  it('says any other problem by its detail, even one titled "Validation failed"', () => {
    const error = new ApiError(
      400,
      problem({
        title: 'Validation failed',
        detail: 'Token t1 in a detokenization expression does not exist.',
        errors: { t1: ['no such token'] },
      }),
    );
    expect(report(error).stderr).toBe(
      'Error: Validation failed (400): Token t1 in a detokenization expression does not exist.\n',
    );
  });

  it('adds the flag that changes the tier to a `tier-required` problem (the emulator names none)', () => {
    const error = new ApiError(
      403,
      problem({
        type: PROBLEM_TYPES.tierRequired,
        title: 'Enterprise tier required',
        status: 403,
        detail: 'Transactions is an Enterprise-tier feature; this emulator runs the standard tier.',
      }),
    );
    expect(report(error).stderr).toBe(
      'Error: Enterprise tier required (403): Transactions is an Enterprise-tier feature; this emulator runs the standard tier. Restart it with `svc serve --tier enterprise`.\n',
    );
  });
});
