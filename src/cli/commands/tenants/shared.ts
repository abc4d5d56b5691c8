import { ApiError, UnexpectedResponseError } from '../../../client/errors.js';
import { UserError } from '../../io/errors.js';
import { isLoopback } from '../../target/describe.js';

/** `svc tenants` works against the emulator only: a remote target is one line before any request. */
export function requireEmulator(baseUrl: string): void {
  // A base URL on this machine: the emulator's admin routes answer nothing else.
  if (!isLoopback(baseUrl)) {
    throw new UserError(
      `svc tenants works against the emulator on this machine only (its admin route answers loopback callers); the target is ${baseUrl}. Pass --base-url http://127.0.0.1:8790, or run it where \`svc serve\` runs.`,
    );
  }
}

/**
 * A server on loopback without the tenants route (not the emulator, or one from before `svc tenants
 * list`: a 404 or 405 that is no svc problem, or says there is no route) is one line; else the error.
 */
export function notAnEmulator(error: unknown, baseUrl: string): unknown {
  const status = error instanceof ApiError || error instanceof UnexpectedResponseError ? error.status : undefined;
  if (status !== 404 && status !== 405) return error;
  if (error instanceof ApiError) {
    const { problem } = error;
    const svc = problem.type.startsWith('urn:svc:problem:') && problem.trace_id !== undefined;
    if (svc && problem.detail?.startsWith('No route ') !== true && status === 404) return error;
  }
  return new UserError(
    `The server at ${baseUrl} has no tenants admin route (${status}): svc tenants works against the emulator (\`svc serve\`).`,
  );
}
