import type { IncomingHttpHeaders } from 'node:http';
import {
  JSON_CONTENT_TYPE,
  JSON_UTF8_CONTENT_TYPE,
  MERGE_PATCH_CONTENT_TYPE,
  PROBLEM_CONTENT_TYPE,
} from '../../api/headers.js';
import { BODY_LIMIT_LABEL } from '../../api/limits.js';
import type { Explanation } from '../../api/explanation.js';
import { HttpError, problemOf, validationError } from '../errors.js';
import type { ExplanationStore } from '../services/explanations.js';
import type { EmitEvent } from '../events.js';
import { checkedCustomResponse, withoutOwnedHeaders } from '../user-code-headers.js';
import { StoreError, StoreWriteError } from '../store/errors.js';
import { fieldErrors } from '../validation.js';
import { MAX_PARAM_LENGTH, originForm } from './router.js';

/** What a text answer is sent as when nothing else set its type. */
export const TEXT_CONTENT_TYPE = 'text/plain; charset=utf-8';

/** What of a request its error answer depends on. */
export interface ErrorRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The trace id. */
  id: string;
  /** The tenant the request belongs to, when known: its refusals' explanations are kept for it. */
  tenantId?: string | undefined;
  /** Set by the error answer: a refusal's one-line reason, for the request's log line. */
  reason?: string | undefined;
}

/** An answer as it is written: status, headers (names in lower case) and the body's bytes or text. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer | string;
}

/** The one error answer (errorAnswer below); `proxy`: answered as a proxy_error. */
export type ErrorAnswer = (error: unknown, request: ErrorRequest, proxy: boolean) => Answer;

/**
 * Whether a request target is a proxy call's, `/proxy` or `/proxy/...` (its query aside): every
 * error answered there is a proxy_error (spec 4.3), also one met before the proxy is known (a
 * path the router cannot decode, a method no proxy takes, a header node:http refuses).
 */
export function isProxyPath(url: string): boolean {
  // An absolute target (`http://host/proxy`) by its path.
  const path = url.charCodeAt(0) === 47 ? url : originForm(url);
  if (!path.startsWith('/proxy')) return false;
  const next = path.charCodeAt(6);
  // End, '/', '?' or '#'.
  return Number.isNaN(next) || next === 47 || next === 63 || next === 35;
}

/** An error thrown while a request is read: a code of the body reader or router, or a route part's validation. */
interface RequestError extends Error {
  code?: string;
  statusCode?: number;
  validation?: unknown;
  validationContext?: string;
}

/** What the errors of reading a request (body reader, router) mean to a caller, by code. */
const REQUEST_ERRORS: Record<string, (error: RequestError, request: ErrorRequest) => HttpError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new HttpError(413, `The request body is over the ${BODY_LIMIT_LABEL} limit.`),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: (_error, request) =>
    new HttpError(
      415,
      `Content-Type ${request.headers['content-type'] ?? '(none)'} is not accepted here; send ${request.method === 'PATCH' ? MERGE_PATCH_CONTENT_TYPE : JSON_CONTENT_TYPE}.`,
    ),
  FST_ERR_CTP_INVALID_JSON_BODY: (error) =>
    new HttpError(400, `The body is not valid JSON: ${error.message}`, { title: 'Malformed JSON', cause: error }),
  FST_ERR_CTP_EMPTY_JSON_BODY: () =>
    new HttpError(
      400,
      `The body is empty but Content-Type is ${JSON_CONTENT_TYPE}; send a JSON body or no Content-Type.`,
    ),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new HttpError(400, 'Content-Length does not match the body.'),
  FST_ERR_BAD_URL: (_error, request) =>
    new HttpError(
      400,
      `The path ${pathOf(request.url)} is not valid: a % must start a UTF-8 percent-encoding (e.g. %C3%A9).`,
    ),
  FST_ERR_MAX_PARAM_LENGTH: () =>
    new HttpError(414, `A path segment is over the length of any id (${MAX_PARAM_LENGTH} characters).`),
};

export function pathOf(url: string): string {
  return url.split('?')[0] ?? url;
}

/** The Retry-After of an answer while the emulator starts. */
export const STARTING_RETRY_AFTER = '1';

/**
 * The answer to any request while the emulator starts (it listens before it bootstraps, so that a
 * port in use fails first): a 503, with Retry-After.
 */
export function startingError(): HttpError {
  return new HttpError(503, 'The emulator is starting; try again in a moment.', { title: 'Starting' });
}

/** Maps anything thrown while answering a request to an HttpError; unknown errors become 500. */
export function toHttpError(error: unknown, request: ErrorRequest): HttpError {
  if (error instanceof HttpError) return error;
  // The disk refused a write (full, read-only): nothing was kept, and the caller may retry.
  if (error instanceof StoreWriteError) return new HttpError(503, error.message, { title: 'Not saved', cause: error });
  const requestError = error as RequestError;
  if (requestError.validation) {
    const errors = fieldErrors(requestError.validation as never, requestError.validationContext);
    return validationError(errors);
  }
  // Own codes only: a code such as `constructor` names no refusal of ours.
  const known =
    typeof requestError.code === 'string' && Object.hasOwn(REQUEST_ERRORS, requestError.code)
      ? REQUEST_ERRORS[requestError.code]
      : undefined;
  if (known) return known(requestError, request);
  const status = requestError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return new HttpError(status, requestError.message);
  return new HttpError(500, `An internal error occurred (trace id ${request.id}); the emulator log has the details.`, {
    cause: error,
  });
}

/** The answer to an HttpError: its problem document, or the custom response user code threw as it is. */
export function problemAnswer(error: HttpError, traceId: string): Answer {
  if (error.response) {
    // Checked where user code is called (naming it); this is the last guard before Node's writer.
    const checked = checkedCustomResponse(error, 'User code');
    if (checked !== error) return problemAnswer(checked as HttpError, traceId);
    const { status, headers, body } = error.response;
    // The trace id and the framing of the answer stay the emulator's; names in lower case.
    const answer: Answer = { status, headers: {}, body: '' };
    for (const [name, value] of Object.entries(withoutOwnedHeaders(headers)))
      answer.headers[name.toLowerCase()] = value;
    if (typeof body === 'string') {
      answer.headers['content-type'] ??= TEXT_CONTENT_TYPE;
      // Bytes: given a string, Node writes the header block in the body's encoding (UTF-8), which
      // would turn a Latin-1 header value into other bytes than the ones set.
      answer.body = Buffer.from(body);
    } else {
      answer.headers['content-type'] = JSON_UTF8_CONTENT_TYPE;
      answer.body = Buffer.from(JSON.stringify(body ?? null));
    }
    return answer;
  }
  return {
    status: error.status,
    headers: {
      'content-type': PROBLEM_UTF8_CONTENT_TYPE,
      ...(error.retryAfter !== undefined && { 'retry-after': String(error.retryAfter) }),
    },
    body: JSON.stringify(problemOf(error, traceId)),
  };
}

const PROBLEM_UTF8_CONTENT_TYPE = `${PROBLEM_CONTENT_TYPE}; charset=utf-8`;

/**
 * The single place where errors become answers (problem+json; `{"proxy_error": ...}` on a proxy
 * call). A bug in answering is a 500 problem too, never another shape.
 */
export function errorAnswer(emit: EmitEvent, debug: boolean, explanations?: ExplanationStore): ErrorAnswer {
  return (error, request, proxy) => {
    try {
      const answer = answerOf(error, request, proxy, emit, debug);
      if (error instanceof HttpError) explained(error, request, explanations);
      return answer;
    } catch (failure) {
      const cause = failure instanceof Error ? failure : new Error(String(failure));
      emit({
        type: 'error',
        traceId: request.id,
        message: `answering an error failed: ${cause.message}`,
        stack: cause.stack,
      });
      return problemAnswer(
        new HttpError(500, `An internal error occurred (trace id ${request.id}); the emulator log has the details.`),
        request.id,
      );
    }
  };
}

/**
 * A refusal's explanation (issue 30): its reason for the request's log line, and the whole kept
 * for GET /_emulator/explanations/{trace_id} when the tenant is known.
 */
function explained(error: HttpError, request: ErrorRequest, explanations: ExplanationStore | undefined): void {
  const explanation = error.extensions?.explanation as Explanation | undefined;
  if (explanation === undefined) {
    if (error.status !== 401 && error.status !== 403) return;
    request.reason = error.detail;
    return;
  }
  // A refusal answered with less than it was (an anonymous proxy's caller) is kept whole for its tenant.
  const kept = (error as { keptExplanation?: Explanation }).keptExplanation ?? explanation;
  request.reason = kept.reason;
  if (explanations && request.tenantId !== undefined) {
    const path = pathOf(request.url.charCodeAt(0) === 47 ? request.url : originForm(request.url));
    explanations.record(
      request.tenantId,
      { traceId: request.id, method: request.method, path, status: error.status },
      kept,
    );
  }
}

function answerOf(error: unknown, request: ErrorRequest, proxy: boolean, emit: EmitEvent, debug: boolean): Answer {
  // A custom response that cannot be sent is a problem like any other (a proxy_error on /proxy).
  const httpError = checkedCustomResponse(toHttpError(error, request), 'User code') as HttpError;
  // An HttpError is an answer svc chose (a 502 from an unreachable destination, a reactor's
  // own 500, already logged as its invocation); anything else is a bug, logged with its stack.
  if (!(error instanceof HttpError)) {
    const cause = error instanceof Error ? error : new Error(String(error));
    // A store error says all there is to say: its stack would only hide the cause in the log.
    const stack = error instanceof StoreError ? undefined : cause.stack;
    if (httpError.status >= 500) emit({ type: 'error', traceId: request.id, message: cause.message, stack });
    if (debug && httpError.status >= 500 && stack !== undefined) {
      return problemAnswer(new HttpError(500, `${httpError.detail}\n${cause.stack ?? cause.message}`), request.id);
    }
  }
  if (proxy && !httpError.response) {
    // Spec 4.3: an error inside the proxy is an object with `proxy_error`.
    return {
      status: httpError.status,
      headers: {
        'content-type': JSON_UTF8_CONTENT_TYPE,
        ...(httpError.retryAfter !== undefined && { 'retry-after': String(httpError.retryAfter) }),
      },
      body: JSON.stringify({ proxy_error: problemOf(httpError, request.id) }),
    };
  }
  return problemAnswer(httpError, request.id);
}
