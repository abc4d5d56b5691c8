/** The headers of a proxied call, both ways: what is forwarded, what a transform may set, what comes back (pure). */
import {
  API_KEY_HEADER,
  HOP_BY_HOP_HEADERS,
  IDEMPOTENCY_KEY_HEADER,
  PROXY_CONNECTION_HEADER,
  PROXY_HOP_HEADER,
  PROXY_KEEP_ALIVE_HEADER,
  PROXY_KEY_HEADER,
  TRACE_HEADER,
  TRANSACTION_HEADER,
} from '../../api/headers.js';
import { checkedHeaders } from '../user-code-headers.js';

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
  ...HOP_BY_HOP_HEADERS,
  'host',
  'expect',
  'content-length',
]);

/** Hop-by-hop headers of a response: they describe one connection, not the message. */
const HOP_BY_HOP: ReadonlySet<string> = new Set(HOP_BY_HOP_HEADERS);

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
    if (!HEADER_NAME.test(name)) continue;
    const lower = name.toLowerCase();
    if (NOT_FORWARDED.has(lower)) continue;
    const first = seen.get(lower);
    if (first !== undefined) headers[first] = `${headers[first]}, ${value}`;
    else {
      seen.set(lower, name);
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
export function responseHeaders(
  headers: Record<string, string | string[] | undefined>,
  keepLength: boolean,
): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (
      value === undefined ||
      HOP_BY_HOP.has(name) ||
      name === TRACE_HEADER ||
      (!keepLength && name === 'content-length')
    )
      continue;
    result[name] = value;
  }
  return result;
}

/** A header's value by its name in lower case, whatever the case it is sent in. */
export function headerOf(headers: Record<string, string>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

export function isJsonContentType(contentType: string | undefined): boolean {
  return contentType !== undefined && /^application\/([\w.+-]+\+)?json\b/i.test(contentType.trim());
}

/** Bodies that are bytes, not text: never searched for expressions. */
export function isBinaryContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  return /^(application\/(octet-stream|pdf|zip|gzip|x-protobuf|protobuf)|image\/|audio\/|video\/|font\/)/i.test(
    contentType.trim(),
  );
}
