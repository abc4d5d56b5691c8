/** Where a proxied call goes: the path after /proxy, the caller's query, the destination URL (pure). */
import { PROXY_KEY_QUERY } from '../../api/headers.js';
import { HttpError } from '../errors.js';

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
    if (reason)
      throw new HttpError(
        400,
        `The proxy path ${JSON.stringify(suffix)} is refused: ${reason}. A proxy call stays under its destination's path.`,
        { title: 'Unsafe proxy path' },
      );
    url.pathname = `${base}${suffix}`;
    if (!url.pathname.startsWith(`${base}/`))
      throw new HttpError(400, `The proxy path ${JSON.stringify(suffix)} would leave the destination's path.`, {
        title: 'Unsafe proxy path',
      });
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
