/** How a proxy invocation is taken apart and put together again (pure). */
import {
  API_KEY_HEADER,
  IDEMPOTENCY_KEY_HEADER,
  PROXY_CONNECTION_HEADER,
  PROXY_HOP_HEADER,
  PROXY_KEEP_ALIVE_HEADER,
  PROXY_KEY_HEADER,
  PROXY_KEY_QUERY,
  TRACE_HEADER,
  TRANSACTION_HEADER,
} from '../../api/headers.js';
import { HttpError } from '../errors.js';
import { checkedHeaders } from '../headers.js';

/** Header names the platform accepts on proxied requests: alphanumerics, `-` and `_` only. */
const HEADER_NAME = /^[A-Za-z0-9_-]+$/;

/** Never forwarded: svc's own credentials and controls, and hop-by-hop headers of this connection. */
const NOT_FORWARDED = new Set([
  API_KEY_HEADER,
  PROXY_KEY_HEADER,
  PROXY_KEEP_ALIVE_HEADER,
  PROXY_CONNECTION_HEADER,
  TRANSACTION_HEADER,
  IDEMPOTENCY_KEY_HEADER,
  PROXY_HOP_HEADER,
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'content-length',
]);

/** Hop-by-hop headers of a response: they describe one connection, not the message. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

/**
 * The caller's headers to forward, names in the caller's own case (from Node's rawHeaders);
 * names with other characters than the platform allows are dropped, as are svc's own.
 */
export function forwardableHeaders(rawHeaders: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  const seen = new Map<string, string>();
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    const value = rawHeaders[i + 1]!;
    if (!HEADER_NAME.test(name) || NOT_FORWARDED.has(name.toLowerCase())) continue;
    const first = seen.get(name.toLowerCase());
    if (first !== undefined) headers[first] = `${headers[first]}, ${value}`;
    else {
      seen.set(name.toLowerCase(), name);
      headers[name] = value;
    }
  }
  return headers;
}

/**
 * Headers a transform returned, checked (a name or value that cannot be sent is a 500 naming
 * `owner` and the header), less those no single hop may set (the framing is the forwarder's).
 */
export function transformHeaders(headers: unknown, owner: string): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(checkedHeaders(headers, owner))) {
    if (NOT_FORWARDED.has(name.toLowerCase()) && name.toLowerCase() !== TRANSACTION_HEADER) continue;
    result[name] = value;
  }
  return result;
}

/**
 * The destination's response headers to pass back, without hop-by-hop ones, and without a trace
 * id of its own: SVC-TRACE-ID on an answer is always the emulator's.
 */
export function responseHeaders(headers: Record<string, string | string[] | undefined>, keepLength: boolean): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || name === TRACE_HEADER || (!keepLength && name === 'content-length')) continue;
    result[name] = value;
  }
  return result;
}

/** The raw query without the proxy key (the rest kept exactly as sent), with its `?`, or ''. */
export function forwardedQuery(rawUrl: string): { query: string; proxyKey: string | undefined } {
  const at = rawUrl.indexOf('?');
  if (at < 0) return { query: '', proxyKey: undefined };
  let proxyKey: string | undefined;
  const kept = rawUrl
    .slice(at + 1)
    .split('&')
    .filter((part) => {
      const [name = '', value = ''] = part.split('=');
      if (safeDecode(name) !== PROXY_KEY_QUERY) return true;
      proxyKey ??= safeDecode(value);
      return false;
    })
    .filter((part) => part !== '');
  return { query: kept.length ? `?${kept.join('&')}` : '', proxyKey };
}

/** The path after `/proxy` (`''` or `/...`), from the raw URL. */
export function pathSuffix(rawUrl: string): string {
  const path = rawUrl.split('?')[0] ?? '';
  return path.slice('/proxy'.length);
}

/**
 * destination_url joined with the suffix and the query: its own query first, then the caller's.
 * A suffix that could climb out of the destination's path, or be read as another host, is a 400
 * (see unsafePath); the URL's pathname setter never changes the host, and the result is checked
 * to lie under the base path all the same.
 */
export function destinationUrl(destination: string, suffix: string, query: string): URL {
  const url = new URL(destination);
  const base = url.pathname.replace(/\/+$/, '');
  if (suffix) {
    const reason = unsafePath(suffix);
    if (reason) throw new HttpError(400, `The proxy path ${JSON.stringify(suffix)} is refused: ${reason}. A proxy call stays under its destination's path.`, { title: 'Unsafe proxy path' });
    url.pathname = `${base}${suffix}`;
    if (!url.pathname.startsWith(`${base}/`)) throw new HttpError(400, `The proxy path ${JSON.stringify(suffix)} would leave the destination's path.`, { title: 'Unsafe proxy path' });
  }
  if (query) url.search = url.search ? `${url.search}&${query.slice(1)}` : query;
  return url;
}

/** Percent-encodings are undone this many times at most: a suffix encoded deeper is refused. */
const DECODE_LEVELS = 3;
/** What a dot segment, an encoding, a backslash, a control character or an empty segment needs. */
const SUSPECT = /[%.\\\x00-\x1f\x7f]|\/\//;

/**
 * Why a path suffix is unsafe, or undefined. Servers, frameworks and proxies on the way decode a
 * path in different ways (once, twice, `\` as `/`, `..;` as `..`), so the suffix is checked as
 * sent and after each level of percent-decoding: no `.` or `..` segment, no backslash, no control
 * character, no empty segment.
 */
export function unsafePath(suffix: string): string | undefined {
  if (!suffix.startsWith('/')) return 'it must start with /';
  // Most suffixes hold none of the characters that matter: one test clears them.
  if (!SUSPECT.test(suffix)) return undefined;
  let text = suffix;
  for (let level = 0; ; level++) {
    if (text.includes('\\')) return 'it holds a backslash';
    if (/[\x00-\x1f\x7f]/.test(text)) return 'it holds a control character';
    // `//` as sent, or `//` first once decoded, reads as another host to some (`//evil.example/x`).
    if (level === 0 ? text.includes('//') : text.startsWith('//')) return 'it holds an empty segment (//)';
    for (const segment of text.split('/')) {
      const name = segment.split(';')[0];
      if (name === '.' || name === '..') return 'it holds a "." or ".." segment';
    }
    const decoded = text.replace(/%([0-9a-fA-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (decoded === text) return undefined;
    if (level === DECODE_LEVELS) return 'it is percent-encoded too many times over';
    text = decoded;
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

export function isJsonContentType(contentType: string | undefined): boolean {
  return contentType !== undefined && /^application\/([\w.+-]+\+)?json\b/i.test(contentType.trim());
}

/** Bodies that are bytes, not text: never searched for expressions. */
export function isBinaryContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  return /^(application\/(octet-stream|pdf|zip|gzip|x-protobuf|protobuf)|image\/|audio\/|video\/|font\/)/i.test(contentType.trim());
}
