import { PROBLEM_TYPES, problemDefaults, type Problem } from '../api/problem.js';

/** How a message says an option of createEmulator: `options.port` as the library names it, `--port` as `svc serve` does. */
export type OptionNamer = (option: string) => string;

/** The library's own names: `options.<name>`. */
export const LIBRARY_NAMES: OptionNamer = (option) => `options.${option}`;

/**
 * An expected failure to start or run the emulator (a port in use, an unusable data file, a bad
 * key): its message is complete and meant for the user as it is, without a stack. `option` is the
 * option of createEmulator at fault, if any. A message that names options is given as words of a
 * namer: `message` names them as the library does (`options.port`), and worded() as a caller takes
 * them (the CLI, as flags), with no text rewritten.
 */
export class EmulatorError extends Error {
  override readonly name: string = 'EmulatorError';
  readonly option: string | undefined;
  private readonly words: ((name: OptionNamer) => string) | undefined;

  constructor(message: string | ((name: OptionNamer) => string), options: { option?: string; cause?: unknown } = {}) {
    const text = typeof message === 'string' ? message : message(LIBRARY_NAMES);
    super(text, options.cause === undefined ? undefined : { cause: options.cause });
    this.option = options.option;
    this.words = typeof message === 'string' ? undefined : message;
  }

  /** The message with each option it names said by `name`. */
  worded(name: OptionNamer): string {
    return this.words ? this.words(name) : this.message;
  }
}

/** A response user code asked for as it is (CustomHttpResponseError), instead of a problem. */
export interface CustomResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export interface HttpErrorOptions {
  /** Default: the status's (problemDefaults). */
  title?: string | undefined;
  /** Default: the status's; see PROBLEM_TYPES. */
  type?: string | undefined;
  /** Field-level messages, keyed by the field's path. */
  errors?: Record<string, string[]> | undefined;
  /** When set, the HTTP layer answers with exactly this instead of a problem document. */
  response?: CustomResponse | undefined;
  /** Members of the problem beyond the standard ones (RFC 9457 extensions), e.g. a reactor's `raw`. */
  extensions?: Record<string, unknown> | undefined;
  /** What caused it, for the log (never sent). */
  cause?: unknown;
  /** Seconds after which the request may be tried again (answered as Retry-After). */
  retryAfter?: number | undefined;
}

/**
 * The one error the emulator throws on purpose. Services throw it where a problem is found; the
 * HTTP layer turns it, and only it, into a problem+json response (problemOf).
 */
export class HttpError extends Error {
  override readonly name: string = 'HttpError';
  readonly title: string;
  readonly type: string;
  readonly errors: Record<string, string[]> | undefined;
  readonly response: CustomResponse | undefined;
  /** Members of the problem beyond the standard ones (RFC 9457 extensions), e.g. a reactor's `raw`. */
  readonly extensions: Record<string, unknown> | undefined;
  /** Seconds after which the request may be tried again (answered as Retry-After). */
  readonly retryAfter: number | undefined;

  constructor(
    readonly status: number,
    readonly detail: string,
    options: HttpErrorOptions = {},
  ) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    const defaults = problemDefaults(status);
    this.title = options.title ?? defaults.title;
    this.type = options.type ?? defaults.type;
    this.errors = options.errors;
    this.response = options.response;
    this.extensions = options.extensions;
    this.retryAfter = options.retryAfter;
  }
}

/**
 * The problem document of an error: an HttpError as it is, anything else as the internal error it
 * is (its message as the detail: for a stored outcome, which only its owner reads; the HTTP layer
 * answers bugs with a detail of its own). `traceId` is added when given.
 */
export function problemOf(error: unknown, traceId?: string): Problem {
  const problem: Problem =
    error instanceof HttpError
      ? {
          ...error.extensions,
          type: error.type,
          title: error.title,
          status: error.status,
          detail: error.detail,
          ...(error.errors && { errors: error.errors }),
        }
      : { ...problemDefaults(500), status: 500, detail: error instanceof Error ? error.message : String(error) };
  // Every 401 and 403 says why (issue 30): one with no explanation of its own (an admin route's,
  // a tier's) is explained by its detail.
  if ((problem.status === 401 || problem.status === 403) && problem.explanation === undefined) {
    problem.explanation = {
      decision: problem.status === 401 ? 'unauthenticated' : 'denied',
      reason: problem.detail ?? problem.title,
      application: null,
    };
  }
  return traceId === undefined ? problem : { ...problem, trace_id: traceId };
}

/** A 400 with field-level messages; `detail` sums them up in one line. */
export function validationError(errors: Record<string, string[]>): HttpError {
  const first = Object.entries(errors)[0];
  const summary = first ? `${first[0]} ${first[1][0]}` : 'the request is invalid';
  const more = Object.keys(errors).length > 1 ? ` (and ${Object.keys(errors).length - 1} more)` : '';
  return fieldError(`Invalid request: ${summary}${more}.`, errors);
}

/** A 400 about fields of the request (`validation`), with a detail of its own. */
export function fieldError(detail: string, errors: Record<string, string[]>): HttpError {
  return new HttpError(400, detail, { errors, title: 'Validation failed', type: PROBLEM_TYPES.validation });
}

export function notFound(what: string, id: string): HttpError {
  return new HttpError(404, `No ${what} with id ${id}.`);
}

/** Collects field errors while checking a body, then throws them all at once. */
export class FieldErrors {
  // No prototype: a field named `constructor` or `__proto__` is a key like any other.
  private readonly errors: Record<string, string[]> = Object.create(null);
  /** Kept as they are added: checks read it before and after each field (a token's several times). */
  private added = 0;

  get count(): number {
    return this.added;
  }

  add(field: string, message: string): void {
    (this.errors[field] ??= []).push(message);
    this.added++;
  }

  throwIfAny(): void {
    if (Object.keys(this.errors).length > 0) throw validationError(this.errors);
  }
}
