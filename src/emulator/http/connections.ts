import { randomUUID } from 'node:crypto';
import { type IncomingMessage, STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { TRACE_HEADER } from '../../api/headers.js';
import { HttpError } from '../errors.js';
import type { EmitEvent } from '../events.js';
import { type ErrorAnswer, isProxyPath } from './problems.js';
import { requestEvent } from './trace.js';

/** How long a client may take to send a request, and how long a stop waits for answers. */
export interface HttpTimeouts {
  /** The whole request, headers and body, must arrive within this (else 408 and the connection closes). */
  requestTimeoutMs: number;
  /** The headers must arrive within this (slow headers); at most `requestTimeoutMs`. */
  headersTimeoutMs: number;
  /** On stop, requests in flight get this long to finish before their connections are cut. */
  shutdownGraceMs: number;
}

export const DEFAULT_TIMEOUTS: HttpTimeouts = {
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  shutdownGraceMs: 10_000,
};

/** node:http options that bound slow clients (slowloris): checked often enough to hold the bound. */
export function serverOptions({ requestTimeoutMs, headersTimeoutMs }: HttpTimeouts) {
  const headersTimeout = Math.min(headersTimeoutMs, requestTimeoutMs);
  return {
    // node:http answers a missing Host with an empty 400; the server's hook answers a problem instead.
    requireHostHeader: false,
    requestTimeout: requestTimeoutMs,
    headersTimeout,
    // Node looks for late requests on this interval (30 s by default, which would double the bound).
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(headersTimeout / 4))),
  };
}

/** What node:http's parser reports, by code, as a status and a sentence for the caller. */
function describeClientError(error: NodeJS.ErrnoException): { status: number; detail: string } {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        detail: 'The request did not arrive in time (headers and body); the connection is closed.',
      };
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        detail: 'The request line and headers are over the 16 KB limit (a long URL or query string counts).',
      };
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return {
        status: 400,
        detail: 'Content-Length is not valid (not a number, repeated, or sent with Transfer-Encoding).',
      };
    default:
      return {
        status: 400,
        detail: `The request is not valid HTTP/1.1 (${error.code ?? 'parse error'}: ${(error as { reason?: string }).reason ?? error.message}).`,
      };
  }
}

/** What node:http's parser read of a request it then refused: its method and target, when it got that far. */
interface BrokenRequest {
  method?: string;
  url?: string;
}

/** A request line, as llhttp takes it: a token, a target, the version. */
const REQUEST_LINE = /(?:^|\n)([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP\/\d\.\d\r?\n/g;

/**
 * The request a parse error broke off: the one being answered when its body broke, else the last
 * request line before the error in the bytes the parser was reading (a request line that arrived
 * in an earlier packet, or headers too slow to finish, leave it unknown).
 */
function brokenRequest(error: NodeJS.ErrnoException, pending: ServerResponse | null | undefined): BrokenRequest {
  if (pending && !pending.req.complete) return { method: pending.req.method, url: pending.req.url };
  const { rawPacket, bytesParsed } = error as { rawPacket?: unknown; bytesParsed?: number };
  if (!Buffer.isBuffer(rawPacket)) return {};
  const text = rawPacket.toString('latin1', 0, typeof bytesParsed === 'number' ? bytesParsed + 1 : undefined);
  let found: BrokenRequest = {};
  for (const match of text.matchAll(REQUEST_LINE)) found = { method: match[1], url: match[2] };
  return found;
}

/**
 * An answer written straight to the socket, then the connection closed: for requests node:http
 * never hands to a handler (a parse error, CONNECT). Worded by the one error answer (a proxy_error
 * on /proxy); the answer to HEAD has the headers only.
 */
export function rawAnswer(
  answerError: ErrorAnswer,
  status: number,
  detail: string,
  request: BrokenRequest,
  id: string = randomUUID(),
): Buffer {
  const url = request.url ?? '';
  const errorRequest = { method: request.method ?? '', url, headers: {}, id };
  const answer = answerError(new HttpError(status, detail), errorRequest, isProxyPath(url));
  const body = Buffer.from(answer.body);
  const headers = Object.entries(answer.headers).map(([name, value]) => `${name}: ${value}`);
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    ...headers,
    `content-length: ${body.length}`,
    `${TRACE_HEADER}: ${id}`,
    'connection: close',
    '',
    '',
  ].join('\r\n');
  return request.method === 'HEAD' ? Buffer.from(head, 'latin1') : Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

/**
 * Errors node:http meets before a request reaches a route (bytes that are not HTTP, a bad
 * Content-Length, headers too large, a request too slow): answered with a problem, then the
 * connection is closed, since the parser cannot find where the next request would begin. The
 * answer to an earlier, complete request on that connection is let finish first. A connection in
 * `lastAnswered` has had its answer (a request refused with Connection: close): it is only closed.
 */
export function clientErrorHandler(emit: EmitEvent, answerError: ErrorAnswer, lastAnswered: WeakSet<Socket>) {
  return (error: NodeJS.ErrnoException, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    // node:http's own handler looks here too: the response of the request being answered, if any.
    const pending = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (lastAnswered.has(socket)) {
      // A request refused before its body was read has had the connection's last answer: no second one.
      if (!pending || pending.writableFinished) socket.end();
      else pending.once('close', () => socket.destroy());
      return;
    }
    const { status, detail } = describeClientError(error);
    emit({ type: 'warning', message: `answered ${status} and closed a connection: ${detail}` });
    const request = brokenRequest(error, pending);
    const answer = () => {
      if (socket.writable) socket.end(rawAnswer(answerError, status, detail, request), () => socket.destroy());
      else socket.destroy();
    };
    if (!pending || pending.writableFinished) return answer();
    if (pending.req.complete) {
      // A whole request, answered while the bad bytes after it arrived: its answer goes first.
      pending.once('finish', answer);
      pending.once('close', () => {
        if (!pending.writableFinished) socket.destroy();
      });
      return;
    }
    // The broken request is the one being answered: a problem in its place, unless its answer
    // has begun (then only closing is left).
    if (pending.headersSent) socket.destroy();
    else answer();
  };
}

/**
 * CONNECT (node:http hands it over as a tunnel, with no answer of its own): svc is no forward
 * proxy, so a 405 problem, and the connection closed.
 */
export function connectHandler(emit: EmitEvent, answerError: ErrorAnswer) {
  return (req: IncomingMessage, socket: Duplex): void => {
    // The socket is no longer node:http's: an error on it (a reset) is ours to swallow.
    socket.on('error', () => {});
    const detail =
      'CONNECT is not answered here: svc is not a forward proxy. Call a proxy with POST, GET, PUT, PATCH or DELETE /proxy.';
    const started = performance.now();
    const traceId = randomUUID();
    socket.end(rawAnswer(answerError, 405, detail, { method: req.method, url: req.url }, traceId), () =>
      socket.destroy(),
    );
    emit(requestEvent(req.method ?? 'CONNECT', req.url ?? '', 405, performance.now() - started, traceId, undefined));
  };
}

/**
 * Stops accepting connections at once; requests in flight get `graceMs` to finish, each answer
 * marked `Connection: close` so that no client sends another on it; then what is left is cut.
 */
export async function closeGracefully(
  server: Server,
  inFlight: ReadonlySet<ServerResponse>,
  graceMs: number,
): Promise<void> {
  for (const response of inFlight) if (!response.headersSent) response.setHeader('connection', 'close');
  const cut = setTimeout(() => server.closeAllConnections(), graceMs);
  try {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  } finally {
    clearTimeout(cut);
  }
}
