import type { Problem } from '../api/problem.js';

/** The server answered with an error: `problem` is its problem+json body (or one made from the status). */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(problem.detail ?? problem.title);
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

/** The server answered, but not as the svc API does (a web page, another API): most often a wrong base URL. */
export class UnexpectedResponseError extends Error {
  override readonly name = 'UnexpectedResponseError';
  constructor(
    readonly url: string,
    readonly status: number,
    readonly contentType: string,
  ) {
    super(`The server at ${url} did not answer like the svc API (HTTP ${status}, ${contentType || 'no content type'}).`);
  }
}
