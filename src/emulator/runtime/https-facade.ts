/**
 * `require('https')` as user code sees it. The sandbox process makes no connection of its own: a
 * request is sent over the channel to the emulator, which sends it out (through its outbound
 * gateway) and streams the answer back. User code gets a Writable standing for the request (the
 * header methods of Node's ClientRequest, 'response', 'timeout' and 'error' events, abort) and a
 * Readable standing for the answer (status, headers, data and end); neither holds anything of the
 * network stack or of the channel (the exchange behind them sits in private fields).
 *
 * A request belongs to the call that makes it, as its timers do: one still under way when the call
 * ends is destroyed (sent or not), and a call that is over cannot make one. Its events run as the
 * call's work (an AsyncResource made when the request was).
 */
import { AsyncResource } from 'node:async_hooks';
import { Readable, Writable } from 'node:stream';
import type { RequestOwner } from './facades.js';
import {
  MAX_OUTBOUND_BODY_BYTES,
  OUTBOUND_CHUNK_BYTES,
  OUTBOUND_WINDOW_BYTES,
  type FromSandbox,
  type HttpsReply,
} from './protocol.js';
import { type RequestHead, type RequestSpec, validHeader } from './https-options.js';
import { bodyTooLarge, oversizedHead } from './outbound-bounds.js';

/** Whose work a request is: a call (its id) or a version's top-level code. */
export interface HttpsOwner extends RequestOwner {
  vid: string;
  id?: number;
}

/** The error a sandbox sees: a plain Error with the code and message of the emulator's, nothing else. */
export function plainError(error: unknown, fallback: string): Error {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const plain = new Error(typeof message === 'string' ? message : fallback);
  if (typeof code === 'string') (plain as Error & { code: string }).code = code;
  return plain;
}

/** The process's requests under way, by id: replies of the emulator go to theirs. */
export class HttpsLink {
  private seq = 0;
  readonly exchanges = new Map<number, Exchange>();

  constructor(readonly post: (message: FromSandbox) => void) {}

  nextId(): number {
    return ++this.seq;
  }

  receive(message: HttpsReply): void {
    const exchange = this.exchanges.get(message.id);
    if (exchange) exchange.scope.runInAsyncScope(() => exchange.reply(message));
  }
}

/** One request and its answer, behind the objects user code holds. */
class Exchange {
  readonly id: number;
  /** The call's context, for the events of the request and its answer. */
  readonly scope = new AsyncResource('SandboxHttpsRequest');
  started = false;
  opened = false;
  ended = false;
  done = false;
  /** Body pieces not yet sent, and their bytes; bytes sent the emulator has not taken yet. */
  private queue: Buffer[] = [];
  private queued = 0;
  private unacked = 0;
  private written = 0;
  private writeWaiting: (() => void) | undefined;
  /** The end of the body was sent (or went with the request, whole). */
  private sentEnd = false;
  response: SandboxResponse | undefined;
  private unread = 0;
  private idleMs = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly link: HttpsLink,
    readonly request: SandboxRequest,
    readonly head: RequestHead,
    private readonly owner: HttpsOwner,
  ) {
    this.id = link.nextId();
    link.exchanges.set(this.id, this);
  }

  /** The headers are fixed once the body begins (or on flushHeaders); the request leaves at the end of the turn. */
  start(now = false): void {
    if (!this.started) {
      this.started = true;
      if (!now) setImmediate(() => this.open());
    }
    if (now) this.open();
  }

  write(chunk: Buffer, callback: (error?: Error | null) => void): void {
    this.written += chunk.length;
    if (this.written > MAX_OUTBOUND_BODY_BYTES) return callback(plainError(bodyTooLarge(), 'too large'));
    for (let at = 0; at < chunk.length; at += OUTBOUND_CHUNK_BYTES)
      this.queue.push(chunk.subarray(at, at + OUTBOUND_CHUNK_BYTES));
    this.queued += chunk.length;
    this.start();
    this.flush();
    // Before the request leaves, its body waits here whole (so that a body ended at once goes with its length).
    if (!this.opened || this.queued < OUTBOUND_WINDOW_BYTES) callback();
    else this.writeWaiting = () => callback();
  }

  end(): void {
    this.ended = true;
    this.start();
    this.flush();
  }

  private open(): void {
    if (this.opened || this.done) return;
    this.opened = true;
    const whole = this.ended && this.queued <= OUTBOUND_CHUNK_BYTES;
    const headers = this.head.headers();
    // A body whose length is known streams with it (as Node sends a body ended at once), not chunked.
    if (this.ended && !whole && !('content-length' in lower(headers)) && !('transfer-encoding' in lower(headers)))
      headers['content-length'] = String(this.queued);
    // Over the bounds the emulator holds it to: refused here, before it costs the emulator a frame.
    const oversized = oversizedHead({ url: this.head.url, method: this.head.method, headers, tls: this.head.tls });
    if (oversized)
      return this.scope.runInAsyncScope(() => this.reply({ type: 'https-error', id: this.id, ...oversized }));
    const body = whole ? Buffer.concat(this.queue) : Buffer.alloc(0);
    if (whole) [this.queue, this.queued, this.sentEnd] = [[], 0, true];
    this.link.post({
      type: 'https',
      id: this.id,
      call: this.owner.id ?? null,
      vid: this.owner.vid,
      method: this.head.method,
      url: this.head.url,
      headers,
      tls: this.head.tls,
      body: body.toString('base64'),
      end: whole,
    });
    this.touch();
    this.flush();
  }

  /** Sends what the window allows; the end once nothing is left. */
  private flush(): void {
    if (!this.opened || this.done) return;
    while (this.queue.length > 0 && this.unacked < OUTBOUND_WINDOW_BYTES) {
      const piece = this.queue.shift()!;
      this.queued -= piece.length;
      this.unacked += piece.length;
      this.link.post({ type: 'https-body', id: this.id, data: piece.toString('base64'), end: false });
    }
    if (this.queued < OUTBOUND_WINDOW_BYTES && this.writeWaiting) {
      const resume = this.writeWaiting;
      this.writeWaiting = undefined;
      resume();
    }
    if (this.ended && this.queue.length === 0 && !this.sentEnd) {
      this.sentEnd = true;
      this.link.post({ type: 'https-body', id: this.id, data: '', end: true });
    }
  }

  reply(message: HttpsReply): void {
    this.touch();
    switch (message.type) {
      case 'https-written':
        this.unacked -= message.bytes;
        return this.flush();
      case 'https-response':
        this.response = new SandboxResponse(this, message);
        // As Node does, an answer nobody listens for is read and dropped.
        if (!this.request.emit('response', this.response)) this.response.resume();
        return;
      case 'https-data': {
        const chunk = Buffer.from(message.data, 'base64');
        this.unread += chunk.length;
        if (this.response?.push(chunk)) this.read();
        return;
      }
      case 'https-end':
        this.finish();
        if (!this.response) return;
        this.response.complete = true;
        this.response.trailers = { ...message.trailers };
        this.response.push(null);
        this.request.destroy();
        return;
      case 'https-error': {
        this.finish();
        const error = plainError(message, 'the request failed');
        if (this.response) this.response.destroy(error);
        else this.request.destroy(error);
        return;
      }
    }
  }

  /** The answer was read: the emulator may send as much again. */
  read(): void {
    if (this.unread === 0 || this.done) return;
    this.link.post({ type: 'https-read', id: this.id, bytes: this.unread });
    this.unread = 0;
  }

  /** Given up (destroyed, aborted, its call over): the emulator drops it. */
  abort(): void {
    if (this.done) return;
    this.finish();
    if (this.opened) this.link.post({ type: 'https-abort', id: this.id });
  }

  /** 'timeout' once no byte went either way for `ms` (as a socket's idle timeout). */
  setIdle(ms: number): void {
    this.idleMs = ms;
    this.touch();
  }

  private touch(): void {
    clearTimeout(this.idleTimer);
    if (this.idleMs > 0 && !this.done)
      this.idleTimer = setTimeout(
        () => this.scope.runInAsyncScope(() => this.request.emit('timeout')),
        this.idleMs,
      ).unref();
  }

  private finish(): void {
    this.done = true;
    clearTimeout(this.idleTimer);
    this.link.exchanges.delete(this.id);
  }
}

function lower(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

/** The answer to a sandbox's request: status, headers and the body as a Readable. */
export class SandboxResponse extends Readable {
  readonly statusCode: number;
  readonly statusMessage: string;
  readonly httpVersion = '1.1';
  readonly headers: Record<string, string | string[]>;
  readonly rawHeaders: string[];
  trailers: Record<string, string> = {};
  complete = false;
  readonly #exchange: Exchange;

  constructor(exchange: Exchange, head: Extract<HttpsReply, { type: 'https-response' }>) {
    super({ read: () => exchange.read() });
    this.#exchange = exchange;
    this.statusCode = head.status;
    this.statusMessage = head.statusMessage;
    this.headers = { ...head.headers };
    this.rawHeaders = Object.entries(head.headers).flatMap(([name, value]) =>
      (Array.isArray(value) ? value : [value]).flatMap((one) => [name, one]),
    );
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.#exchange.done) {
      this.#exchange.abort();
      this.#exchange.request.destroy();
    }
    callback(error);
  }
}

/** A sandbox's request: a Writable for the body, with the header methods of Node's ClientRequest. */
export class SandboxRequest extends Writable {
  readonly method: string;
  readonly path: string;
  readonly host: string;
  readonly #exchange: Exchange;

  constructor(link: HttpsLink, spec: RequestSpec, owner: HttpsOwner) {
    super({
      write: (chunk: Buffer, _encoding, callback) => this.#exchange.write(chunk, callback),
      final: (callback) => {
        this.#exchange.end();
        callback();
      },
      // Writing the body is not the end of a request: its answer is still to come.
      autoDestroy: false,
    });
    this.#exchange = new Exchange(link, this, spec.head, owner);
    this.method = spec.head.method;
    this.path = spec.head.path;
    this.host = spec.head.host;
    if (spec.callback) this.once('response', spec.callback);
    if (spec.timeout !== undefined) this.setTimeout(spec.timeout);
    const { signal } = spec;
    if (signal) {
      const abort = () => this.destroy(plainError({ code: 'ABORT_ERR', message: 'The operation was aborted' }, ''));
      if (signal.aborted) queueMicrotask(abort);
      else {
        signal.addEventListener('abort', abort, { once: true });
        this.once('close', () => signal.removeEventListener('abort', abort));
      }
    }
  }

  setHeader(name: string, value: string | number | readonly string[]): this {
    this.#unsent();
    this.#exchange.head.set(String(name), validHeader(String(name), value));
    return this;
  }

  getHeader(name: string): string | number | string[] | undefined {
    const value = this.#exchange.head.get(String(name));
    return Array.isArray(value) ? [...value] : value;
  }

  getHeaders(): Record<string, string | number | string[] | undefined> {
    return this.#exchange.head.all();
  }

  hasHeader(name: string): boolean {
    return this.#exchange.head.get(String(name)) !== undefined;
  }

  removeHeader(name: string): void {
    this.#unsent();
    this.#exchange.head.remove(String(name));
  }

  get headersSent(): boolean {
    return this.#exchange.started;
  }

  flushHeaders(): void {
    this.#exchange.start(true);
  }

  setTimeout(ms: number, callback?: () => void): this {
    this.#exchange.setIdle(Number(ms));
    if (typeof callback === 'function') this.once('timeout', callback);
    return this;
  }

  abort(): void {
    this.destroy();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const exchange = this.#exchange;
    if (!exchange.done) {
      exchange.abort();
      exchange.response?.destroy(plainError({ code: 'ECONNRESET', message: 'aborted' }, 'aborted'));
    }
    callback(error);
  }

  #unsent(): void {
    if (this.#exchange.started) {
      const error = new Error('Cannot set headers after they are sent to the client');
      throw Object.assign(error, { code: 'ERR_HTTP_HEADERS_SENT' });
    }
  }
}
