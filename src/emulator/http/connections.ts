import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { PROBLEM_CONTENT_TYPE, TRACE_HEADER } from '../../api/headers.js';
import { problemDefaults, type Problem } from '../../api/problem.js';
import type { EmitEvent } from '../events.js';

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

function rawProblem(status: number, detail: string): string {
  const traceId = randomUUID();
  const problem: Problem = { ...problemDefaults(status), status, detail, trace_id: traceId };
  const body = JSON.stringify(problem);
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    `Content-Type: ${PROBLEM_CONTENT_TYPE}; charset=utf-8`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    `${TRACE_HEADER}: ${traceId}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * Errors node:http meets before a request reaches fastify (bytes that are not HTTP, a bad
 * Content-Length, headers too large, a request too slow): answered with a problem, then the
 * connection is closed, since the parser cannot find where the next request would begin. The
 * answer to an earlier, complete request on that connection is let finish first.
 */
export function clientErrorHandler(emit: EmitEvent) {
  return (error: NodeJS.ErrnoException, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const { status, detail } = describeClientError(error);
    emit({ type: 'warning', message: `answered ${status} and closed a connection: ${detail}` });
    const answer = () => {
      if (socket.writable) socket.end(rawProblem(status, detail), () => socket.destroy());
      else socket.destroy();
    };
    // node:http's own handler looks here too: the response of the request being answered, if any.
    const pending = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
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
