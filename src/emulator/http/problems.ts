import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import {
  JSON_CONTENT_TYPE,
  JSON_UTF8_CONTENT_TYPE,
  MERGE_PATCH_CONTENT_TYPE,
  PROBLEM_CONTENT_TYPE,
  PROXY_DESTINATION_STATUS_HEADER,
} from '../../api/headers.js';
import { BODY_LIMIT_LABEL } from '../../api/limits.js';
import { HttpError, problemOf, validationError } from '../errors.js';
import type { EmitEvent } from '../events.js';
import { checkedCustomResponse, withoutOwnedHeaders } from '../user-code-headers.js';
import { StoreError, StoreWriteError } from '../store/errors.js';
import { fieldErrors } from '../validation.js';
import { TEXT_CONTENT_TYPE } from './send.js';

/**
 * The longest path parameter the router matches. Ids are at most 200 characters (token ids);
 * a longer one still reaches its route and gets the schema's 400, and past this a 414.
 */
export const MAX_PARAM_LENGTH = 1024;

/** What of a request its error answer depends on: a fastify request, or one the lean routes answer. */
export interface ErrorRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The trace id. */
  id: string;
}

/** An answer as it is written: status, headers (names in lower case) and the body's bytes or text. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer | string;
}

/** The one error answer of both HTTP paths (errorAnswer below); `proxy`: answered as a proxy_error. */
export type ErrorAnswer = (error: unknown, request: ErrorRequest, proxy: boolean) => Answer;

/**
 * Whether a request target is a proxy call's, `/proxy` or `/proxy/...` (its query aside): every
 * error answered there is a proxy_error (spec 4.3), also one met before the proxy is known (a
 * path the router cannot decode, a method no proxy takes, a header node:http refuses).
 */
export function isProxyPath(url: string): boolean {
  if (!url.startsWith('/proxy')) return false;
  const next = url.charCodeAt(6);
  // End, '/', '?' or '#'.
  return Number.isNaN(next) || next === 47 || next === 63 || next === 35;
}

/** What fastify's own errors mean to a caller, by code. */
const FASTIFY_ERRORS: Record<string, (error: FastifyError, request: ErrorRequest) => HttpError> = {
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

function pathOf(url: string): string {
  return url.split('?')[0] ?? url;
}

/** The Retry-After of an answer while the emulator starts. */
export const STARTING_RETRY_AFTER = '1';

/**
 * The answer to any request while the emulator starts (it listens before it bootstraps, so that a
 * port in use fails first): a 503, with Retry-After, on both HTTP paths.
 */
export function startingError(): HttpError {
  return new HttpError(503, 'The emulator is starting; try again in a moment.', { title: 'Starting' });
}

/** Maps anything thrown while answering a request to an HttpError; unknown errors become 500. */
export function toHttpError(error: unknown, request: ErrorRequest): HttpError {
  if (error instanceof HttpError) return error;
  // The disk refused a write (full, read-only): nothing was kept, and the caller may retry.
  if (error instanceof StoreWriteError) return new HttpError(503, error.message, { title: 'Not saved', cause: error });
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const errors = fieldErrors(fastifyError.validation as never, fastifyError.validationContext);
    return validationError(errors);
  }
  const known = fastifyError.code ? FASTIFY_ERRORS[fastifyError.code] : undefined;
  if (known) return known(fastifyError, request);
  if (fastifyError instanceof SyntaxError && fastifyError.statusCode === 400) {
    return new HttpError(400, `The body is not valid JSON: ${fastifyError.message}`, {
      title: 'Malformed JSON',
      cause: error,
    });
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return new HttpError(status, fastifyError.message);
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
    // The trace id and the framing of the answer stay the emulator's; names as fastify keeps them.
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

/** Sends an answer through fastify, which frames it (Content-Length) as it is. */
function sendAnswer(reply: FastifyReply, answer: Answer): FastifyReply {
  for (const [name, value] of Object.entries(answer.headers)) reply.header(name, value);
  return reply.status(answer.status).send(answer.body);
}

/**
 * The single place where errors become answers (problem+json; `{"proxy_error": ...}` on a proxy
 * call), for both HTTP paths: fastify's error handler and the lean routes. A bug in answering is
 * a 500 problem too, never another shape.
 */
export function errorAnswer(emit: EmitEvent, debug: boolean): ErrorAnswer {
  return (error, request, proxy) => {
    try {
      return answerOf(error, request, proxy, emit, debug);
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
 * fastify's error handler, also given the router's refusals and the answer of no route: on a
 * /proxy path, whether a route took it or not, the answer is a proxy_error.
 */
export function problemHandler(emit: EmitEvent, debug: boolean) {
  const answer = errorAnswer(emit, debug);
  return (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const proxy = request.routeOptions?.config?.proxy === true || isProxyPath(request.url);
    // A proxy_error never carries SVC-PROXY-DESTINATION-STATUS (it did not come from the destination).
    if (proxy) reply.removeHeader(PROXY_DESTINATION_STATUS_HEADER);
    return sendAnswer(reply, answer(error, request, proxy));
  };
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

/** The answer when no route takes a request: a 404, through the error handler (a proxy_error on /proxy). */
export function notFoundHandler(handle: ReturnType<typeof problemHandler>) {
  return (request: FastifyRequest, reply: FastifyReply) =>
    handle(new HttpError(404, `No route ${request.method} ${pathOf(request.url)}.`), request, reply);
}
