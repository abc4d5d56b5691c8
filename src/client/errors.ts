import { PROBLEM_TYPES, type Problem } from '../api/problem.js';

export interface ApiErrorContext {
  /** Which of the client's keys the refused request carried (none: a call without a key). */
  key?: 'management' | 'api';
  /** What the caller adds to the server's words (the CLI: where the refused key came from). */
  note?: string;
}

/**
 * The server answered with an error: `problem` is its problem+json body (or one made from the
 * status). Switch on `type` (PROBLEM_TYPES), never on the title, which is prose.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly key: 'management' | 'api' | undefined;
  readonly note: string | undefined;
  constructor(
    readonly status: number,
    readonly problem: Problem,
    context: ApiErrorContext = {},
  ) {
    super(problem.detail ?? problem.title);
    this.key = context.key;
    this.note = context.note;
  }

  /** What went wrong, as a stable URN (`urn:svc:problem:validation`, ...). */
  get type(): string {
    return this.problem.type;
  }

  /**
   * The server's words in one line: `title (status): detail`. A validation failure is best said field
   * by field; anything else by its detail's first line (a load error's code excerpt is the API's, not
   * the one-line summary's). The one wording of an ApiError for the CLI and apply.
   */
  get summary(): string {
    // A platform error user code threw carries its class's fixed text as the detail ("Bad Request")
    // and the code's own words as `errors` (`{"error": ["amount is required"]}`): those say it.
    const thrown = this.type === PROBLEM_TYPES.userCode;
    const fields = Object.entries(this.problem.errors ?? {}).flatMap(([field, messages]) =>
      messages.map((message) => (thrown && field === 'error' ? message : `${field}: ${message}`)),
    );
    const firstLine = (this.problem.detail ?? '').split('\n')[0] ?? '';
    const detail =
      fields.length > 0 && (this.type === PROBLEM_TYPES.validation || thrown || !firstLine)
        ? fields.join('; ')
        : firstLine;
    return `${this.problem.title} (${this.status})${detail ? `: ${detail}` : ''}`;
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
    super(
      `The server at ${url} did not answer like the svc API (HTTP ${status}, ${contentType || 'no content type'}).`,
    );
  }
}

/**
 * The status of an answer saying that the emulator route called is not there, else undefined: a 404
 * or 405 that is no problem of the svc API (a web page, another API's JSON), or the svc emulator's
 * own "No route" (a version from before the route). An unknown id is the svc API's 404 and stays an ApiError.
 */
export function routeMissingStatus(error: unknown): number | undefined {
  if (error instanceof UnexpectedResponseError)
    return error.status === 404 || error.status === 405 ? error.status : undefined;
  if (!(error instanceof ApiError) || (error.status !== 404 && error.status !== 405)) return undefined;
  const { problem } = error;
  // The svc API's problems carry their type and the request's trace id; one made up by the client
  // from another server's JSON carries no trace id.
  const svc = problem.type.startsWith('urn:svc:problem:') && problem.trace_id !== undefined;
  const noRoute = problem.detail?.startsWith('No route ') === true;
  return svc && !noRoute ? undefined : error.status;
}
