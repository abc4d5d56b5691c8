import type { Problem } from '../api/problem.js';

/**
 * The server answered with an error: `problem` is its problem+json body (or one made from the
 * status). Switch on `type` (PROBLEM_TYPES), never on the title, which is prose.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(problem.detail ?? problem.title);
  }

  /** What went wrong, as a stable URN (`urn:svc:problem:validation`, ...). */
  get type(): string {
    return this.problem.type;
  }
}

/** The server could not be reached at all. */
export class ConnectionError extends Error {
  override readonly name = 'ConnectionError';
  constructor(
    readonly url: string,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
  }
}
