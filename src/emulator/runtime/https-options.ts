/**
 * What user code's `https.request(...)` arguments say, read into data of the sandbox's own (nothing
 * user code passed is kept: its options objects, getters and proxies are read once), with Node's
 * checks of a method, a path and a header.
 */
import { TLS_STRING_OPTIONS, type HttpsTls } from './protocol.js';

type HeaderValue = string | number | string[];

/** The request line and headers of a request, until they are sent. */
export class RequestHead {
  readonly #headers = new Map<string, { name: string; value: HeaderValue }>();

  constructor(
    readonly method: string,
    readonly host: string,
    readonly path: string,
    readonly url: string,
    readonly tls: HttpsTls,
  ) {}

  set(name: string, value: HeaderValue): void {
    this.#headers.set(name.toLowerCase(), { name, value });
  }

  get(name: string): HeaderValue | undefined {
    return this.#headers.get(name.toLowerCase())?.value;
  }

  remove(name: string): void {
    this.#headers.delete(name.toLowerCase());
  }

  /** As Node's getHeaders: lower-case names. */
  all(): Record<string, HeaderValue> {
    const all: Record<string, HeaderValue> = {};
    for (const [key, { value }] of this.#headers) all[key] = Array.isArray(value) ? [...value] : value;
    return all;
  }

  /** The headers to send, in the case they were set in (several values of one header joined). */
  headers(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const { name, value } of this.#headers.values())
      out[name] = Array.isArray(value) ? value.join(', ') : String(value);
    return out;
  }
}

export interface RequestSpec {
  head: RequestHead;
  callback: ((response: unknown) => void) | undefined;
  /** The idle timeout asked for (`timeout`). */
  timeout: number | undefined;
  signal: AbortSignal | undefined;
}

/** Options of `https.request` that only describe the request; everything else is ignored. */
const STRING_OPTIONS = ['host', 'hostname', 'path', 'method', 'auth', ...TLS_STRING_OPTIONS] as const;

type Options = Partial<Record<(typeof STRING_OPTIONS)[number], string>> & {
  port?: number;
  timeout?: number;
  rejectUnauthorized?: boolean;
  family?: 4 | 6;
  signal?: AbortSignal;
  headers?: [string, HeaderValue][];
};

const TOKEN = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
const INVALID_HEADER_CHAR = /[^\t\x20-\x7e\x80-\xff]/;
const INVALID_PATH = /[^\u0021-\u00ff]/;

function nodeError(Kind: ErrorConstructor, code: string, message: string): Error {
  return Object.assign(new Kind(message), { code });
}

/** A header as Node's setHeader takes it: a token name, a value without control characters. */
export function validHeader(name: string, value: unknown): HeaderValue {
  if (!TOKEN.test(name))
    throw nodeError(TypeError, 'ERR_INVALID_HTTP_TOKEN', `Header name must be a valid HTTP token ["${name}"]`);
  if (value === undefined)
    throw nodeError(TypeError, 'ERR_HTTP_INVALID_HEADER_VALUE', `Invalid value "undefined" for header "${name}"`);
  const normalized: HeaderValue = Array.isArray(value)
    ? value.map(String)
    : typeof value === 'number'
      ? value
      : String(value);
  for (const one of Array.isArray(normalized) ? normalized : [String(normalized)])
    if (INVALID_HEADER_CHAR.test(one))
      throw nodeError(TypeError, 'ERR_INVALID_CHAR', `Invalid character in header content ["${name}"]`);
  return normalized;
}

/** The module a request is made with: `https` (TLS, port 443) or `http` (plain, port 80). */
export type Scheme = 'https:' | 'http:';

/** Reads Node's `(url, options, callback)` / `(options, callback)` forms, for `https` or `http`. */
export function readRequest(args: unknown[], scheme: Scheme = 'https:'): RequestSpec {
  const module = scheme.slice(0, -1);
  let [first, second, third] = args;
  const options: Options = {};
  if (typeof first === 'string' || first instanceof URL) {
    const url = new URL(String(first));
    if (url.protocol !== scheme)
      throw Object.assign(new TypeError(`Protocol "${url.protocol}" not supported. Expected "${scheme}"`), {
        code: 'ERR_INVALID_PROTOCOL',
      });
    options.hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    if (url.port) options.port = Number(url.port);
    options.path = `${url.pathname}${url.search}`;
    if (url.username || url.password)
      options.auth = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  } else {
    third = second;
    second = first;
  }
  if (typeof second === 'function') {
    third = second;
    second = undefined;
  }
  if (second !== undefined && second !== null) {
    if (typeof second !== 'object') throw new TypeError(`${module}.request options must be an object.`);
    copyOptions(second as Record<string, unknown>, options, scheme);
  }
  if (third !== undefined && typeof third !== 'function')
    throw new TypeError(`The ${module}.request callback must be a function.`);
  return {
    head: headOf(options, scheme),
    callback: third as RequestSpec['callback'],
    timeout: options.timeout,
    signal: options.signal,
  };
}

function copyOptions(from: Record<string, unknown>, to: Options, scheme: Scheme): void {
  const protocol = from.protocol;
  if (protocol !== undefined && protocol !== null && protocol !== scheme) {
    throw Object.assign(new TypeError(`Protocol "${String(protocol)}" not supported. Expected "${scheme}"`), {
      code: 'ERR_INVALID_PROTOCOL',
    });
  }
  for (const name of STRING_OPTIONS) {
    const value = from[name];
    if (value !== undefined && value !== null) to[name] = String(value);
  }
  if (from.port !== undefined && from.port !== null) to.port = Number(from.port);
  if (typeof from.timeout === 'number') to.timeout = from.timeout;
  if (typeof from.rejectUnauthorized === 'boolean') to.rejectUnauthorized = from.rejectUnauthorized;
  if (from.family === 4 || from.family === 6) to.family = from.family;
  if (from.signal instanceof AbortSignal) to.signal = from.signal;
  const headers = from.headers;
  if (headers !== undefined && headers !== null) {
    if (typeof headers !== 'object') throw new TypeError('https.request headers must be an object.');
    to.headers = [];
    for (const [name, value] of Object.entries(headers as object))
      if (value !== undefined && value !== null) to.headers.push([String(name), validHeader(String(name), value)]);
  }
}

function headOf(options: Options, scheme: Scheme): RequestHead {
  const method = options.method ?? 'GET';
  if (!TOKEN.test(method))
    throw nodeError(TypeError, 'ERR_INVALID_HTTP_TOKEN', `Method must be a valid HTTP token ["${method}"]`);
  const path = options.path ?? '/';
  if (INVALID_PATH.test(path))
    throw nodeError(TypeError, 'ERR_UNESCAPED_CHARACTERS', 'Request path contains unescaped characters');
  const host = options.hostname ?? options.host ?? 'localhost';
  const port = options.port ?? (scheme === 'https:' ? 443 : 80);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw nodeError(RangeError, 'ERR_SOCKET_BAD_PORT', `Port should be >= 0 and < 65536. Received ${String(port)}.`);
  const authority = host.includes(':') ? `[${host}]` : host;
  const url = `${scheme}//${authority}:${port}${path.startsWith('/') ? path : `/${path}`}`;
  const tls: HttpsTls = {};
  // A plain-http request has no TLS to configure: what was given for it is not used.
  if (scheme === 'https:') {
    for (const name of TLS_STRING_OPTIONS) if (options[name] !== undefined) tls[name] = options[name];
    if (options.rejectUnauthorized !== undefined) tls.rejectUnauthorized = options.rejectUnauthorized;
  }
  if (options.family !== undefined) tls.family = options.family;
  const head = new RequestHead(method.toUpperCase(), host, path, url, tls);
  for (const [name, value] of options.headers ?? []) head.set(name, value);
  if (options.auth !== undefined && head.get('authorization') === undefined)
    head.set('Authorization', `Basic ${Buffer.from(options.auth).toString('base64')}`);
  return head;
}
