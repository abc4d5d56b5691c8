import { problemDefaults } from '../api/problem.js';

/**
 * An expected failure to start or run the emulator (a port in use, an unusable data file, a bad
 * key): its message is complete and meant for the user as it is, without a stack.
 */
export class EmulatorError extends Error {
  override readonly name: string = 'EmulatorError';
}

/**
 * The one error the emulator throws on purpose. Services throw it where a problem is found; the
 * HTTP layer turns it, and only it, into a problem+json response.
 */
/** A response user code asked for as it is (CustomHttpResponseError), instead of a problem. */
export interface CustomResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export class HttpError extends Error {
  override readonly name: string = 'HttpError';
  readonly title: string;
  readonly type: string;
  /** When set, the HTTP layer answers with exactly this instead of a problem document. */
  response?: CustomResponse | undefined;
  /** Members of the problem beyond the standard ones (RFC 9457 extensions), e.g. a reactor's `raw`. */
  extensions?: Record<string, unknown> | undefined;

  constructor(
    readonly status: number,
    readonly detail: string,
    readonly errors?: Record<string, string[]>,
    title?: string,
  ) {
    super(detail);
    const defaults = problemDefaults(status);
    this.title = title ?? defaults.title;
    this.type = defaults.type;
  }
}

/** A 400 with field-level messages; `detail` sums them up in one line. */
export function validationError(errors: Record<string, string[]>): HttpError {
  const first = Object.entries(errors)[0];
  const summary = first ? `${first[0]} ${first[1][0]}` : 'the request is invalid';
  const more = Object.keys(errors).length > 1 ? ` (and ${Object.keys(errors).length - 1} more)` : '';
  return new HttpError(400, `Invalid request: ${summary}${more}.`, errors, 'Validation failed');
}

export function notFound(what: string, id: string): HttpError {
  return new HttpError(404, `No ${what} with id ${id}.`);
}

/** Collects field errors while checking a body, then throws them all at once. */
export class FieldErrors {
  // No prototype: a field named `constructor` or `__proto__` is a key like any other.
  private readonly errors: Record<string, string[]> = Object.create(null);

  get count(): number {
    return Object.values(this.errors).reduce((sum, messages) => sum + messages.length, 0);
  }

  add(field: string, message: string): void {
    (this.errors[field] ??= []).push(message);
  }

  throwIfAny(): void {
    if (Object.keys(this.errors).length > 0) throw validationError(this.errors);
  }
}
