/** How a proxy invocation is taken apart and put together again (pure). */

/** Header names the platform accepts on proxied requests: alphanumerics, `-` and `_` only. */
const HEADER_NAME = /^[A-Za-z0-9_-]+$/;

/** Never forwarded: svc's own credentials and controls, and hop-by-hop headers of this connection. */
const NOT_FORWARDED = new Set([
  'svc-api-key',
  'svc-proxy-key',
  'svc-proxy-keep-alive',
  'svc-proxy-connection',
  'svc-transaction-id',
  'svc-idempotency-key',
  'svc-proxy-hop',
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

/** Headers a transform returned, less those no single hop may set (the framing is the forwarder's). */
export function transformHeaders(headers: unknown): Record<string, string> {
  const result: Record<string, string> = {};
  if (typeof headers !== 'object' || headers === null) return result;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || value === null || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) continue;
    if (NOT_FORWARDED.has(name.toLowerCase()) && name.toLowerCase() !== 'svc-transaction-id') continue;
    result[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return result;
}

/** The destination's response headers to pass back, without hop-by-hop ones. */
export function responseHeaders(headers: Record<string, string | string[] | undefined>, keepLength: boolean): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || (!keepLength && name === 'content-length')) continue;
    result[name] = value;
  }
  return result;
}

/** The raw query without `svc-proxy-key` (the rest kept exactly as sent), with its `?`, or ''. */
export function forwardedQuery(rawUrl: string): { query: string; proxyKey: string | undefined } {
  const at = rawUrl.indexOf('?');
  if (at < 0) return { query: '', proxyKey: undefined };
  let proxyKey: string | undefined;
  const kept = rawUrl
    .slice(at + 1)
    .split('&')
    .filter((part) => {
      const [name = '', value = ''] = part.split('=');
      if (safeDecode(name) !== 'svc-proxy-key') return true;
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

/** destination_url joined with the suffix and the query: its own query first, then the caller's. */
export function destinationUrl(destination: string, suffix: string, query: string): URL {
  const url = new URL(destination);
  if (suffix) url.pathname = `${url.pathname.replace(/\/+$/, '')}${suffix}`;
  if (query) url.search = url.search ? `${url.search}&${query.slice(1)}` : query;
  return url;
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
