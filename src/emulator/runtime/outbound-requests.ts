/**
 * User code's `https` requests, on the emulator's side of a sandbox process: the sandbox sends a
 * request over its channel, and the emulator sends it out (through the function it was given: the
 * outbound gateway) and streams the answer back. The sandbox holds no network capability of its
 * own. Everything it sends is untrusted: a request's body and its answer are each bounded, and
 * neither way holds more than a window of bytes the other side has not taken, so a sandbox that
 * stops reading (or a destination that floods) costs the emulator a window per request.
 */
import { STATUS_CODES } from 'node:http';
import { PassThrough, Readable } from 'node:stream';
import { megabytes } from '../../lib/megabytes.js';
import {
  MAX_OUTBOUND_BODY_BYTES,
  MAX_OUTBOUND_IN_FLIGHT,
  OUTBOUND_CHUNK_BYTES,
  OUTBOUND_WINDOW_BYTES,
  TLS_STRING_OPTIONS,
  type HttpsMessage,
  type HttpsReply,
} from './protocol.js';
import type { UserAnswer, UserRequest } from './types.js';
import { bodyTooLarge, oversizedHead } from './outbound-bounds.js';

/**
 * The answer bytes written to the channel and not yet read by the sandbox process, beyond which
 * every answer waits: acknowledging a read is the sandbox's word, the channel's backlog is not.
 */
export const MAX_CHANNEL_BACKLOG_BYTES = 4 * OUTBOUND_WINDOW_BYTES;

/** Whose request it is, as the emulator knows it (never as the sandbox says). */
export interface OutboundOwner {
  /** The code version's id (a reactor's, a transform's). */
  instance: string;
  /** The call's request id (undefined: top-level code's work). */
  requestId: string | undefined;
  /** The call it ends with, or null: it ends when its version is unloaded. */
  call: number | null;
  vid: string;
}

/** Sends a request of `owner` out (the runtime names the origin: tenant, code, call). */
export type SendOut = (request: UserRequest, owner: OutboundOwner) => Promise<UserAnswer>;

interface Exchange {
  owner: OutboundOwner;
  /** The destination's origin, as problems name it. */
  origin: string;
  /** The request's body while the sandbox still writes it. */
  body: PassThrough | undefined;
  sent: number;
  /** Bytes of the body passed on and not yet taken by the stream (at most a window, or the sandbox broke the protocol). */
  untaken: number;
  answer: Readable | undefined;
  answered: number;
  /** Bytes of the answer sent and not yet read by the sandbox. */
  unread: number;
  /** Gives the request up while it is still on its way out. */
  abort: AbortController;
}

export class OutboundRequests {
  private readonly exchanges = new Map<number, Exchange>();

  constructor(
    private readonly post: (message: HttpsReply) => void,
    private readonly sendOut: SendOut,
    /** The bytes written to the sandbox process and not yet taken by it (call `drained` once fewer). */
    private readonly backlog: () => number = () => 0,
  ) {}

  /** The channel's backlog went down: the answers it held back go on. */
  drained(): void {
    if (this.backlog() > MAX_CHANNEL_BACKLOG_BYTES) return;
    for (const exchange of this.exchanges.values())
      if (exchange.unread <= OUTBOUND_WINDOW_BYTES && exchange.answer?.isPaused()) exchange.answer.resume();
  }

  /** A message of the sandbox about a request; `owner` undefined: the call or version it names is over. */
  receive(message: HttpsMessage, owner: OutboundOwner | undefined): void {
    const exchange = this.exchanges.get(message.id);
    switch (message.type) {
      case 'https':
        if (exchange) throw new Error(`request ${message.id} was opened twice`);
        return this.open(message, owner);
      case 'https-body':
        if (exchange) this.take(message.id, exchange, Buffer.from(message.data, 'base64'), message.end);
        return;
      case 'https-read':
        if (!exchange) return;
        // A sandbox that says it read more than it was sent would have the emulator send without bound.
        if (message.bytes > exchange.unread) throw new Error('it acknowledged more of an answer than it was sent');
        exchange.unread -= message.bytes;
        if (
          exchange.unread <= OUTBOUND_WINDOW_BYTES &&
          this.backlog() <= MAX_CHANNEL_BACKLOG_BYTES &&
          exchange.answer?.isPaused()
        )
          exchange.answer.resume();
        return;
      case 'https-abort':
        if (exchange) this.end(message.id, exchange);
        return;
    }
  }

  /** The requests of a call that ended (or of a version unloaded: `call` null and its vid). */
  endOwned(call: number | null, vid?: string): void {
    for (const [id, exchange] of this.exchanges)
      if (exchange.owner.call === call && (vid === undefined || exchange.owner.vid === vid)) this.end(id, exchange);
  }

  /** Every request (the process is gone). */
  endAll(): void {
    for (const [id, exchange] of this.exchanges) this.end(id, exchange);
  }

  private open(message: Extract<HttpsMessage, { type: 'https' }>, owner: OutboundOwner | undefined): void {
    const { id } = message;
    if (!owner) return this.refuse(id, 'ERR_CALL_ENDED', 'The call that made this request has ended.');
    if (this.exchanges.size >= MAX_OUTBOUND_IN_FLIGHT)
      return this.refuse(
        id,
        'ERR_SVC_TOO_MANY_REQUESTS',
        `Too many outbound requests under way (at most ${MAX_OUTBOUND_IN_FLIGHT} per sandbox process).`,
      );
    let url: URL;
    try {
      url = new URL(message.url);
    } catch {
      return this.refuse(id, 'ERR_INVALID_URL', 'Invalid URL');
    }
    // User code's `https` and `http` requests both leave through the gateway (plain http as the platform allows it).
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      return this.refuse(id, 'ERR_INVALID_PROTOCOL', 'Only https: and http: can be requested from the sandbox.');
    const oversized = oversizedHead(message);
    if (oversized) return this.refuse(id, oversized.code, oversized.message);
    const first = Buffer.from(message.body, 'base64');
    const exchange: Exchange = {
      owner,
      origin: url.origin,
      body: undefined,
      sent: 0,
      untaken: 0,
      answer: undefined,
      answered: 0,
      unread: 0,
      abort: new AbortController(),
    };
    this.exchanges.set(id, exchange);
    let body: Buffer | PassThrough | undefined;
    if (message.end) {
      if (first.length > MAX_OUTBOUND_BODY_BYTES) return this.fail(id, exchange, bodyTooLarge());
      body = first.length > 0 ? first : undefined;
    } else {
      body = exchange.body = new PassThrough();
      this.take(id, exchange, first, false);
    }
    const { method, headers, tls } = message;
    const request: UserRequest = { url, method, headers, body, tls, signal: exchange.abort.signal };
    this.sendOut(request, owner).then(
      (answer) => {
        // What an interceptor answered may be anything: a throw here would be the emulator's crash.
        try {
          this.answered(id, exchange, answer);
        } catch (error) {
          this.fail(id, exchange, error);
        }
      },
      (error: unknown) => this.fail(id, exchange, error),
    );
  }

  /** A piece of the request's body: passed on, and acknowledged once the stream has taken it. */
  private take(id: number, exchange: Exchange, piece: Buffer, end: boolean): void {
    const body = exchange.body;
    if (!body) return;
    exchange.sent += piece.length;
    if (exchange.sent > MAX_OUTBOUND_BODY_BYTES) return this.fail(id, exchange, bodyTooLarge());
    exchange.untaken += piece.length;
    // The sandbox sends no more than the window it was acknowledged: one that floods is stopped.
    if (exchange.untaken > OUTBOUND_WINDOW_BYTES + OUTBOUND_CHUNK_BYTES)
      throw new Error('it sent more of a request body than the emulator had taken');
    if (piece.length > 0)
      body.write(piece, () => {
        exchange.untaken -= piece.length;
        if (this.exchanges.get(id) === exchange) this.post({ type: 'https-written', id, bytes: piece.length });
      });
    if (end) {
      exchange.body = undefined;
      body.end();
    }
  }

  private answered(id: number, exchange: Exchange, answer: UserAnswer): void {
    if (!(answer.body instanceof Readable)) throw new TypeError('The answer to the request has no body stream.');
    if (this.exchanges.get(id) !== exchange) {
      answer.body.destroy();
      return;
    }
    exchange.answer = answer.body;
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined) headers[name] = value;
    this.post({
      type: 'https-response',
      id,
      status: answer.status,
      statusMessage: answer.statusMessage ?? STATUS_CODES[answer.status] ?? '',
      headers,
    });
    const stream = answer.body;
    stream.on('data', (chunk: Buffer) => {
      if (this.exchanges.get(id) !== exchange) return;
      exchange.answered += chunk.length;
      if (exchange.answered > MAX_OUTBOUND_BODY_BYTES) {
        const limit = megabytes(MAX_OUTBOUND_BODY_BYTES);
        return this.fail(id, exchange, {
          code: 'ERR_SVC_ANSWER_TOO_LARGE',
          message: `The answer of ${exchange.origin} is over ${limit}, the most a request of the sandbox may receive.`,
        });
      }
      for (let at = 0; at < chunk.length; at += OUTBOUND_CHUNK_BYTES)
        this.post({ type: 'https-data', id, data: chunk.subarray(at, at + OUTBOUND_CHUNK_BYTES).toString('base64') });
      exchange.unread += chunk.length;
      if (exchange.unread > OUTBOUND_WINDOW_BYTES || this.backlog() > MAX_CHANNEL_BACKLOG_BYTES) stream.pause();
    });
    stream.once('end', () => {
      if (this.exchanges.get(id) !== exchange) return;
      this.exchanges.delete(id);
      const trailers = (stream as { trailers?: Record<string, string> }).trailers;
      this.post({ type: 'https-end', id, trailers: { ...trailers } });
    });
    stream.once('error', (error) => this.fail(id, exchange, error));
    stream.once('close', () => {
      if (this.exchanges.get(id) === exchange)
        this.fail(id, exchange, { code: 'ECONNRESET', message: 'The answer was cut off.' });
    });
  }

  /** The request failed: the sandbox is told why (a network error's code and words, or the gateway's problem). */
  private fail(id: number, exchange: Exchange, error: unknown): void {
    if (this.exchanges.get(id) !== exchange) return;
    this.end(id, exchange);
    this.post({ type: 'https-error', id, ...reasonOf(error) });
  }

  private refuse(id: number, code: string, message: string): void {
    this.post({ type: 'https-error', id, code, message });
  }

  private end(id: number, exchange: Exchange): void {
    this.exchanges.delete(id);
    exchange.abort.abort();
    exchange.body?.destroy();
    exchange.answer?.destroy();
  }
}

/**
 * What user code is told of a failure: the network's own error when there was one (ECONNREFUSED,
 * a certificate refused: as Node's https would have said it), else the problem's words.
 */
function reasonOf(error: unknown): { code?: string; message: string } {
  const { cause } = (error ?? {}) as { cause?: unknown };
  const network = cause !== undefined && typeof (cause as { code?: unknown }).code === 'string' ? cause : error;
  const { code, message, detail } = (network ?? {}) as { code?: unknown; message?: unknown; detail?: unknown };
  const words = typeof detail === 'string' ? detail : typeof message === 'string' ? message : 'the request failed';
  return typeof code === 'string' ? { code, message: words } : { message: words };
}

/** Whether a message of the sandbox about a request is as the protocol has it. */
export function isHttpsMessage(m: Record<string, unknown>): boolean {
  if (!isId(m.id)) return false;
  switch (m.type) {
    case 'https':
      return (
        (m.call === null || isId(m.call)) &&
        typeof m.vid === 'string' &&
        typeof m.method === 'string' &&
        typeof m.url === 'string' &&
        isStrings(m.headers) &&
        isTls(m.tls) &&
        isPiece(m.body) &&
        typeof m.end === 'boolean'
      );
    case 'https-body':
      return isPiece(m.data) && typeof m.end === 'boolean';
    case 'https-read':
      return isId(m.bytes);
    case 'https-abort':
      return true;
    default:
      return false;
  }
}

/** A piece of a body as base64: at most OUTBOUND_CHUNK_BYTES (the sandbox splits larger ones). */
function isPiece(value: unknown): value is string {
  return typeof value === 'string' && value.length <= Math.ceil(OUTBOUND_CHUNK_BYTES / 3) * 4;
}

function isTls(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const tls = value as Record<string, unknown>;
  return Object.entries(tls).every(([name, option]) =>
    name === 'rejectUnauthorized'
      ? typeof option === 'boolean'
      : name === 'family'
        ? option === 4 || option === 6
        : (TLS_STRING_OPTIONS as readonly string[]).includes(name) && typeof option === 'string',
  );
}

function isStrings(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((entry) => typeof entry === 'string')
  );
}

function isId(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}
