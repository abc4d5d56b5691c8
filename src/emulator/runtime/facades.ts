/**
 * What user code gets instead of Node's modules where a module would hand it a capability.
 *
 * Node's `https` is a door to the whole network stack: `https.Server` inherits from `net.Server`,
 * `globalAgent.createConnection` returns a TLSSocket whose class extends `net.Socket`, and with those
 * constructors code can open plain TCP and Unix sockets, listen, or wrap any file descriptor of the
 * process. So user code never receives a Node object of the network stack: `https.request` copies
 * the options it understands, makes the request itself on an agent of the sandbox's own, and returns
 * a Writable standing for the request and a Readable standing for the answer. Neither holds a
 * reference user code can follow to a socket (the real objects sit in private fields).
 *
 * `crypto` is Node's without the engine and FIPS switches (`setEngine` makes the process dlopen() a
 * file). Everything handed out is hardened by the host afterwards (harden-host.ts).
 */
import type { ClientRequest, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import crypto from 'node:crypto';
import { Readable, Writable } from 'node:stream';

/** Options of `https.request` that only describe the request; everything else is ignored. */
const STRING_OPTIONS = [
  'host',
  'hostname',
  'path',
  'method',
  'auth',
  'servername',
  'ca',
  'cert',
  'key',
  'passphrase',
  'ciphers',
  'minVersion',
  'maxVersion',
] as const;

/** The error a sandbox sees: a plain Error with the code and message of the host's, nothing else. */
function plainError(error: unknown, fallback: string): Error {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const plain = new Error(typeof message === 'string' ? message : fallback);
  if (typeof code === 'string') (plain as Error & { code: string }).code = code;
  return plain;
}

interface RequestSpec {
  options: https.RequestOptions;
  callback: ((response: SandboxResponse) => void) | undefined;
}

/** Reads Node's `(url, options, callback)` / `(options, callback)` forms into options of our own. */
function readArguments(args: unknown[]): RequestSpec {
  let [first, second, third] = args;
  const options: https.RequestOptions = {};
  if (typeof first === 'string' || first instanceof URL) {
    const url = new URL(String(first));
    if (url.protocol !== 'https:')
      throw new TypeError(`Only https: URLs can be requested from the sandbox (not ${url.protocol}).`);
    options.hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    if (url.port) options.port = Number(url.port);
    options.path = `${url.pathname}${url.search}`;
    if (url.username || url.password)
      options.auth = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    first = undefined;
  } else {
    third = second;
    second = first;
  }
  if (typeof second === 'function') {
    third = second;
    second = undefined;
  }
  if (second !== undefined && second !== null) {
    if (typeof second !== 'object') throw new TypeError('https.request options must be an object.');
    copyOptions(second as Record<string, unknown>, options);
  }
  if (third !== undefined && typeof third !== 'function')
    throw new TypeError('The https.request callback must be a function.');
  return { options, callback: third as RequestSpec['callback'] };
}

function copyOptions(from: Record<string, unknown>, to: https.RequestOptions): void {
  const protocol = from.protocol;
  if (protocol !== undefined && protocol !== null && protocol !== 'https:') {
    throw new TypeError(`Only https: can be requested from the sandbox (not ${String(protocol)}).`);
  }
  for (const name of STRING_OPTIONS) {
    const value = from[name];
    if (value !== undefined && value !== null) (to as Record<string, unknown>)[name] = String(value);
  }
  if (from.port !== undefined && from.port !== null) to.port = Number(from.port);
  if (typeof from.timeout === 'number') to.timeout = from.timeout;
  if (typeof from.rejectUnauthorized === 'boolean') to.rejectUnauthorized = from.rejectUnauthorized;
  if (from.family === 4 || from.family === 6) to.family = from.family;
  if (from.signal instanceof AbortSignal) to.signal = from.signal;
  if (from.headers !== undefined && from.headers !== null) to.headers = copyHeaders(from.headers);
}

function copyHeaders(headers: unknown): OutgoingHttpHeaders {
  if (typeof headers !== 'object') throw new TypeError('https.request headers must be an object.');
  const copy: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers as object)) {
    if (value === undefined || value === null) continue;
    copy[String(name)] = Array.isArray(value) ? value.map(String) : typeof value === 'number' ? value : String(value);
  }
  return copy;
}

/** The answer to a sandbox's request: status, headers and the body as a Readable. */
export class SandboxResponse extends Readable {
  readonly statusCode: number | undefined;
  readonly statusMessage: string | undefined;
  readonly httpVersion: string;
  readonly headers: Record<string, string | string[]>;
  readonly rawHeaders: string[];
  trailers: Record<string, string> = {};
  complete = false;
  readonly #source: IncomingMessage;

  constructor(source: IncomingMessage) {
    super({ read: () => source.resume() });
    this.#source = source;
    this.statusCode = source.statusCode;
    this.statusMessage = source.statusMessage;
    this.httpVersion = source.httpVersion;
    this.headers = { ...(source.headers as Record<string, string | string[]>) };
    this.rawHeaders = [...source.rawHeaders];
    source.on('data', (chunk: Buffer) => {
      if (!this.push(chunk)) source.pause();
    });
    source.on('end', () => {
      this.complete = true;
      this.trailers = { ...(source.trailers as Record<string, string>) };
      this.push(null);
    });
    source.on('error', (error) => this.destroy(plainError(error, 'the response failed')));
    source.on('aborted', () => this.destroy(plainError({ code: 'ECONNRESET', message: 'aborted' }, 'aborted')));
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#source.destroy();
    callback(error);
  }
}

/** A sandbox's request: a Writable for the body, with the header methods of Node's ClientRequest. */
export class SandboxRequest extends Writable {
  readonly method: string;
  readonly path: string;
  readonly host: string;
  readonly #request: ClientRequest;

  constructor(request: ClientRequest, spec: RequestSpec) {
    super({
      write: (chunk: Buffer, _encoding, callback) =>
        request.write(chunk, (error) => callback(error ? plainError(error, 'write failed') : null)),
      final: (callback) => request.end(() => callback()),
      // Writing the body is not the end of a request: its answer is still to come.
      autoDestroy: false,
    });
    this.#request = request;
    request.on('close', () => this.destroy());
    this.method = request.method;
    this.path = request.path;
    this.host = String(spec.options.hostname ?? spec.options.host ?? 'localhost');
    if (spec.callback) this.once('response', spec.callback);
    request.on('response', (response: IncomingMessage) => this.emit('response', new SandboxResponse(response)));
    request.on('timeout', () => this.emit('timeout'));
    request.on('error', (error) => this.destroy(plainError(error, 'the request failed')));
  }

  setHeader(name: string, value: string | number | readonly string[]): this {
    this.#request.setHeader(
      String(name),
      Array.isArray(value) ? value.map(String) : typeof value === 'number' ? value : String(value),
    );
    return this;
  }

  getHeader(name: string): string | number | string[] | undefined {
    const value = this.#request.getHeader(String(name));
    return Array.isArray(value) ? [...value] : value;
  }

  getHeaders(): Record<string, string | number | string[] | undefined> {
    return { ...this.#request.getHeaders() };
  }

  hasHeader(name: string): boolean {
    return this.#request.hasHeader(String(name));
  }

  removeHeader(name: string): void {
    this.#request.removeHeader(String(name));
  }

  get headersSent(): boolean {
    return this.#request.headersSent;
  }

  flushHeaders(): void {
    this.#request.flushHeaders();
  }

  setTimeout(ms: number, callback?: () => void): this {
    this.#request.setTimeout(Number(ms));
    if (typeof callback === 'function') this.once('timeout', callback);
    return this;
  }

  abort(): void {
    this.destroy();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#request.destroy();
    callback(error);
  }
}

/** Accepted for compatibility (`agent: new https.Agent({ keepAlive: true })`); the sandbox's own agent is used. */
export class Agent {
  readonly options: Record<string, unknown>;
  constructor(options: unknown = {}) {
    this.options = typeof options === 'object' && options !== null ? { ...(options as object) } : {};
  }
  destroy(): void {}
}

/**
 * `require('https')` as user code sees it. A request belongs to the call that makes it, as its
 * timers do: one still under way when the call ends is destroyed (sent or not: a request queued on
 * the agent is not sent after), and a call that is over cannot make one.
 */
export function httpsFacade(owner: () => RequestOwner | undefined): object {
  const agent = new https.Agent({ keepAlive: true, maxSockets: 32 });
  const request = (...args: unknown[]): SandboxRequest => {
    const starter = owner();
    if (!starter || starter.finished)
      throw new Error('The call that would make this request has returned: outbound requests belong to their call.');
    const spec = readArguments(args);
    const outgoing = https.request({ ...spec.options, agent });
    {
      const end = () =>
        outgoing.destroy(
          plainError({ code: 'ERR_CALL_ENDED', message: 'The call that made this request has ended.' }, 'ended'),
        );
      starter.timers.add(end);
      outgoing.once('close', () => starter.timers.delete(end));
    }
    return new SandboxRequest(outgoing, spec);
  };
  const get = (...args: unknown[]): SandboxRequest => {
    const outgoing = request(...args);
    outgoing.end();
    return outgoing;
  };
  return { request, get, Agent, globalAgent: new Agent() };
}

/** The switches of `crypto` that reach native code or process-wide state. */
const CRYPTO_DENIED = new Set(['setEngine', 'setFips', 'getFips', 'fips', 'secureHeapUsed']);

/** Who started a piece of work: a call, or a version's top-level code; `finished` once it is over. */
export interface WorkOwner {
  finished: boolean;
  /** Its thread-pool work under way (a finished call's still counts until the work is done). */
  jobs: number;
}

/** Work that can end with its owner: what to do when it does (clear a timer, destroy a request). */
export interface RequestOwner extends WorkOwner {
  timers: Set<() => void>;
}

/** A thread-pool job begun: counted against its starter until `done`. */
function begin(starter: WorkOwner | undefined): { done: () => void } {
  if (starter) starter.jobs++;
  let open = true;
  return {
    done: () => {
      if (open && starter) starter.jobs--;
      open = false;
    },
  };
}

/**
 * `require('crypto')` as user code sees it. Work on the thread pool belongs to the call that
 * starts it, as its timers do: once the call is over its callbacks and promises are dropped, and
 * no more is started, so that no chain of them (each callback starting the next) outlives it; work
 * still running when the call returns is counted (`jobs`), for the process to be replaced.
 * Every function is so wrapped: whichever argument Node takes for the callback (pbkdf2, sign...)
 * is one of the wrapped ones; a call with no function among its arguments is synchronous.
 */
export function cryptoFacade(owner: () => WorkOwner | undefined): object {
  const facade: Record<string, unknown> = {};
  for (const name of Object.keys(crypto)) {
    if (CRYPTO_DENIED.has(name)) continue;
    const value = (crypto as unknown as Record<string, unknown>)[name];
    // Classes (Hash, KeyObject...) are constructed, not called with a callback.
    facade[name] = typeof value === 'function' && /^[a-z]/.test(name) ? ownedCallbacks(value as Work, owner) : value;
  }
  const subtle = ownedPromises(crypto.webcrypto.subtle, owner);
  facade.subtle = subtle;
  facade.webcrypto = {
    subtle,
    getRandomValues: <T extends ArrayBufferView | null>(array: T): T =>
      crypto.webcrypto.getRandomValues(array as never) as T,
    randomUUID: () => crypto.webcrypto.randomUUID(),
    CryptoKey: crypto.webcrypto.CryptoKey,
    [Symbol.toStringTag]: 'Crypto',
  };
  return facade;
}

type Work = (...args: unknown[]) => unknown;

function overError(): Error {
  return new Error('The call that started this work has returned: work on the thread pool belongs to its call.');
}

/** `work` whose callbacks (its function arguments) run only while their starter is live. */
function ownedCallbacks(work: Work, owner: () => WorkOwner | undefined): Work {
  const owned = function (this: unknown, ...args: unknown[]) {
    if (!args.some((arg) => typeof arg === 'function')) return Reflect.apply(work, this, args);
    const starter = owner();
    if (!starter || starter.finished) throw overError();
    const job = begin(starter);
    const guarded = args.map((arg) =>
      typeof arg === 'function'
        ? function (this: unknown, ...results: unknown[]) {
            job.done();
            if (!starter?.finished) return Reflect.apply(arg, this, results);
          }
        : arg,
    );
    try {
      const result = Reflect.apply(work, this, guarded);
      // What answers a callback returns nothing; a function that returned something ran synchronously.
      if (result !== undefined) job.done();
      return result;
    } catch (error) {
      // Refused by Node (a bad argument): nothing was started.
      job.done();
      throw error;
    }
  };
  // What util.promisify reads of the original (generateKeyPair's names of its results), and its name and arity.
  for (const key of [...Object.getOwnPropertySymbols(work), 'name', 'length'])
    Object.defineProperty(owned, key, Object.getOwnPropertyDescriptor(work, key)!);
  return owned;
}

/** SubtleCrypto's methods, each promise settling only while the call that asked is live. */
function ownedPromises(subtle: object, owner: () => WorkOwner | undefined): object {
  const facade: Record<string, unknown> = { [Symbol.toStringTag]: 'SubtleCrypto' };
  for (const name of Object.getOwnPropertyNames(Object.getPrototypeOf(subtle))) {
    const method = (subtle as Record<string, unknown>)[name];
    if (name === 'constructor' || typeof method !== 'function') continue;
    facade[name] = (...args: unknown[]) => {
      const starter = owner();
      if (!starter || starter.finished) return Promise.reject(overError());
      const job = begin(starter);
      return new Promise((resolve, reject) => {
        (Reflect.apply(method, subtle, args) as Promise<unknown>).then(
          (value) => {
            job.done();
            if (!starter?.finished) resolve(value);
          },
          (error: unknown) => {
            job.done();
            if (!starter?.finished) reject(error);
          },
        );
      });
    };
    Object.defineProperty(facade[name], 'name', { value: name });
  }
  return facade;
}
