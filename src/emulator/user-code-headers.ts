/**
 * What user code (a reactor, a proxy transform) may put into an HTTP message: checked here, once,
 * before anything reaches Node's HTTP writer, which would otherwise throw mid-answer and leave the
 * caller with a cut answer (or, for a 1xx status, with no answer at all).
 */
import { HOP_BY_HOP_HEADERS, TRACE_HEADER } from '../api/headers.js';
import { PROBLEM_TYPES } from '../api/problem.js';
import { HttpError, type CustomResponse } from './errors.js';

/** RFC 9110 `token`: the characters a header name may have. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Anything Node refuses in a field value: controls other than HTAB (CR, LF, NUL included), and DEL. */
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;
/** Beyond Latin-1: a header is bytes, and Node writes a value's characters as single bytes. */
const NOT_LATIN1 = /[^\x00-\xff]/;

/**
 * Headers of an answer that belong to the emulator or to the connection, never to user code: the
 * trace id, and the framing (a wrong Content-Length or Transfer-Encoding breaks the connection).
 */
export const OWNED_ANSWER_HEADERS: ReadonlySet<string> = new Set([
  TRACE_HEADER,
  'content-length',
  ...HOP_BY_HOP_HEADERS,
]);

/** Why a header cannot be sent as it is, or undefined when it can. */
export function headerProblem(name: string, value: string): string | undefined {
  if (!TOKEN.test(name))
    return `the header name ${JSON.stringify(name)} is not an HTTP token (letters, digits and !#$%&'*+.^_\`|~-)`;
  if (/[\r\n]/.test(value)) return `the value of header ${name} contains CR or LF`;
  if (value.includes('\0')) return `the value of header ${name} contains NUL`;
  if (CONTROL.test(value)) return `the value of header ${name} contains a control character`;
  const wide = NOT_LATIN1.exec(value);
  if (wide)
    return `the value of header ${name} contains ${JSON.stringify(wide[0])}, outside Latin-1 (encode it, e.g. with encodeURIComponent)`;
  return undefined;
}

/**
 * Headers user code returned, as strings (arrays joined, null and undefined left out), each
 * checked: the first that cannot be sent is a 500 naming `owner` (e.g. "The request transform of
 * proxy x") and the header.
 */
export function checkedHeaders(headers: unknown, owner: string): Record<string, string> {
  const result: Record<string, string> = {};
  if (typeof headers !== 'object' || headers === null) return result;
  for (const [name, raw] of Object.entries(headers)) {
    if (raw === undefined || raw === null) continue;
    const value = Array.isArray(raw) ? raw.join(', ') : String(raw);
    const problem = headerProblem(name, value);
    if (problem)
      throw new HttpError(500, `${owner} set an invalid header: ${problem}.`, {
        title: 'Invalid header',
        type: PROBLEM_TYPES.userCode,
      });
    result[name] = value;
  }
  return result;
}

/** Headers of a custom answer without those the emulator owns. */
export function withoutOwnedHeaders(headers: Record<string, string>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (!OWNED_ANSWER_HEADERS.has(name.toLowerCase())) result[name] = value;
  return result;
}

/**
 * What user code threw, with a CustomHttpResponseError's response checked: a status outside
 * 200-599 (a 1xx is not an answer and leaves the caller waiting) or a header that cannot be sent
 * becomes a 500 problem naming `owner` ("Reactor x", "The request transform of proxy y").
 * Anything else is returned as it is.
 */
export function checkedCustomResponse(error: unknown, owner: string): unknown {
  const response: CustomResponse | undefined = error instanceof HttpError ? error.response : undefined;
  if (!response) return error;
  const { status } = response;
  if (!Number.isInteger(status) || status < 200 || status > 599) {
    return new HttpError(
      500,
      `${owner} threw a CustomHttpResponseError with status ${status}; a response status must be 200 to 599.`,
      {
        title: 'Invalid custom response',
        type: PROBLEM_TYPES.userCode,
      },
    );
  }
  try {
    checkedHeaders(response.headers, `${owner} (CustomHttpResponseError)`);
  } catch (problem) {
    return problem;
  }
  return error;
}
