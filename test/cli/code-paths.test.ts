import { describe, expect, test } from 'vitest';
import { PROBLEM_TYPES, type ProblemLocation } from '../../src/api/problem.js';
import { sentReactor, sentTransform, withCodePaths } from '../../src/cli/io/code-paths.js';
import { ApiError } from '../../src/client/errors.js';

const loadProblem = (detail: string, location?: ProblemLocation) =>
  new ApiError(422, {
    type: PROBLEM_TYPES.userCode,
    title: 'Code does not load',
    status: 422,
    detail,
    ...(location && { location }),
  });

async function refused(error: ApiError, sent: Parameters<typeof withCodePaths>[0]): Promise<ApiError> {
  return withCodePaths(sent, () => Promise.reject(error)).catch((caught: unknown) => caught as ApiError);
}

describe('a load problem names the local file', () => {
  test('the file is read from the problem`s location, not from its detail', async () => {
    // A name the detail alone would not give away (a space in it): only `location` tells where it ends.
    const error = loadProblem('my charge.js:2:5: SyntaxError: Unexpected end of input', {
      file: 'my charge.js',
      line: 2,
      column: 5,
    });
    const localized = await refused(error, [sentReactor('reactors/charge.js')]);
    expect(localized.problem.detail).toBe('reactors/charge.js:2:5: SyntaxError: Unexpected end of input');
    expect(localized.problem.location).toEqual({ file: 'my charge.js', line: 2, column: 5 });
  });

  test('of a proxy`s two transforms, the one the location names', async () => {
    const error = loadProblem('stripe-response-transform.js must export a function', {
      file: 'stripe-response-transform.js',
    });
    const sent = [sentTransform('proxies/in.js', 'request'), sentTransform('proxies/out.js', 'response')];
    expect((await refused(error, sent)).problem.detail).toBe('proxies/out.js must export a function');
  });

  test('a server that sends no location (a remote platform): the file its detail opens with', async () => {
    const error = loadProblem('charge.js:4:12: TypeError: x is not a function');
    const localized = await refused(error, [sentReactor('reactors/charge.js')]);
    expect(localized.problem.detail).toBe('reactors/charge.js:4:12: TypeError: x is not a function');
  });

  test('a problem whose detail does not open with the file it names is left as it is', async () => {
    const error = loadProblem('TypeError: x is not a function', { file: 'charge.js' });
    expect(await refused(error, [sentReactor('reactors/charge.js')])).toBe(error);
  });
});
