import type { Method, Route } from './route.js';

/**
 * The longest path parameter the router matches. Ids are at most 200 characters (token ids);
 * a longer one still reaches its route and gets the schema's 400, and past this a 414.
 */
export const MAX_PARAM_LENGTH = 1024;

/** What a request target finds: a route and its parameters, no route, or a target that cannot be read. */
export type Found =
  | { route: Route; params: Record<string, string>; query: Record<string, unknown> }
  | { route: undefined; refused?: 'bad-url' | 'param-too-long' };

type Segment = { static: string } | { param: string } | { rest: true };

interface Entry {
  route: Route;
  segments: Segment[];
}

/** The order in which routes are tried: a static segment before a parameter before the rest. */
function rank(segment: Segment): number {
  return 'static' in segment ? 0 : 'param' in segment ? 1 : 2;
}

function compare(a: Entry, b: Entry): number {
  for (let i = 0; i < Math.min(a.segments.length, b.segments.length); i++) {
    const difference = rank(a.segments[i]!) - rank(b.segments[i]!);
    if (difference !== 0) return difference;
  }
  return a.segments.length - b.segments.length;
}

/**
 * The routes by method (HEAD: the GET routes that are not proxy calls). A path is matched segment
 * by segment, a static one preferred to a parameter, as written (no slash merged; one trailing
 * slash names the route without it, but on a proxy call), each
 * segment percent-decoded: a % that starts no UTF-8 percent-encoding is a bad target, a parameter
 * over MAX_PARAM_LENGTH matches nothing. An absolute target (`http://host/path`) is matched by its path.
 */
export function createRouter(routes: readonly Route[]): (method: string, url: string) => Found {
  const byMethod = new Map<string, Entry[]>();
  const add = (method: string, entry: Entry) => {
    const list = byMethod.get(method) ?? [];
    list.push(entry);
    byMethod.set(method, list);
  };
  for (const route of routes) {
    const segments: Segment[] = route.path
      .split('/')
      .slice(1)
      .map((part) =>
        part === '*' ? { rest: true } : part.startsWith(':') ? { param: part.slice(1) } : { static: part },
      );
    const methods: readonly Method[] = typeof route.method === 'string' ? [route.method] : route.method;
    for (const method of methods) {
      add(method, { route, segments });
      if (method === 'GET' && !route.proxy) add('HEAD', { route, segments });
    }
  }
  for (const list of byMethod.values()) list.sort(compare);

  return (method, url) => {
    // A method no route takes is still refused for a target that cannot be read, else not found.
    const entries = byMethod.get(method) ?? [];
    const target = url.charCodeAt(0) === 47 ? url : pathOfAbsolute(url);
    if (target === null) return { route: undefined, refused: 'bad-url' };
    const end = pathEnd(target);
    const parts = target.slice(1, end).split('/');
    if (target.includes('%')) {
      for (let i = 0; i < parts.length; i++) {
        const part = parts[i]!;
        if (!part.includes('%')) continue;
        try {
          parts[i] = decodeURIComponent(part);
        } catch {
          return { route: undefined, refused: 'bad-url' };
        }
      }
    }
    let tooLong = false;
    // A trailing slash names the same route (`POST /applications/`), as the platform's router and
    // its clients have it; a proxy call's path is the caller's, kept as it is.
    const trimmed = parts.length > 1 && parts[parts.length - 1] === '' ? parts.slice(0, -1) : undefined;
    for (const entry of entries) {
      let params = matchSegments(entry.segments, parts);
      if (params === undefined && trimmed !== undefined && !entry.route.proxy)
        params = matchSegments(entry.segments, trimmed);
      if (params === 'too-long') tooLong = true;
      else if (params !== undefined)
        return { route: entry.route, params, query: parseQuery(end < target.length ? target.slice(end + 1) : '') };
    }
    return tooLong ? { route: undefined, refused: 'param-too-long' } : { route: undefined };
  };
}

/** The parameters of a path that fits the segments, undefined when it does not fit. */
function matchSegments(segments: Segment[], parts: string[]): Record<string, string> | undefined | 'too-long' {
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if ('rest' in segment) return parts.length > i ? params : undefined;
    const part = parts[i];
    if (part === undefined) return undefined;
    if ('static' in segment) {
      if (part !== segment.static) return undefined;
    } else {
      if (part.length > MAX_PARAM_LENGTH) return 'too-long';
      params[segment.param] = part;
    }
  }
  return parts.length === segments.length ? params : undefined;
}

/** Where the path of a target ends: at its first `?` or `#`. */
function pathEnd(target: string): number {
  for (let i = 1; i < target.length; i++) {
    const code = target.charCodeAt(i);
    if (code === 63 || code === 35) return i;
  }
  return target.length;
}

/**
 * The path of an absolute-form target (`http://host/path?query`): `/` when it has none; the target
 * as it is when it is not http(s) (it then matches nothing); null when its authority cannot be read.
 */
function pathOfAbsolute(url: string): string | null {
  const schemeEnd = url.indexOf('://');
  if (schemeEnd === -1) return url;
  const scheme = url.slice(0, schemeEnd).toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') return url;
  const authorityStart = schemeEnd + 3;
  const pathStart = url.indexOf('/', authorityStart);
  let authorityEnd = pathStart === -1 ? url.length : pathStart;
  const queryStart = url.indexOf('?', authorityStart);
  if (queryStart !== -1 && queryStart < authorityEnd) authorityEnd = queryStart;
  if (url.indexOf('#', authorityStart) !== -1 || authorityEnd === authorityStart) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== `${scheme}:` || parsed.host.length === 0) return null;
  if (authorityEnd === url.length) return '/';
  if (authorityEnd === queryStart) return `/${url.slice(queryStart)}`;
  return url.slice(pathStart);
}

/**
 * The origin form of a request target, `/path?query`: an absolute target's scheme and authority
 * (userinfo included) and any fragment left out, as the router read it.
 */
export function originForm(url: string): string {
  const fragment = url.indexOf('#');
  const target = fragment < 0 ? url : url.slice(0, fragment);
  return target.charCodeAt(0) === 47 ? target : (pathOfAbsolute(target) ?? target);
}

/** A percent-decoded query part; as written when it is not valid percent-encoding. */
function decodePart(text: string): string {
  const plain = text.includes('+') ? text.replace(/\+/g, ' ') : text;
  if (!plain.includes('%')) return plain;
  try {
    return decodeURIComponent(plain) || plain;
  } catch {
    return plain;
  }
}

/**
 * A query string's values: `name=value` pairs split on `&`, `+` as a space, percent-decoded; a name
 * given twice has an array of its values, a name without `=` the empty string. No prototype.
 */
export function parseQuery(text: string): Record<string, unknown> {
  const result: Record<string, unknown> = Object.create(null);
  if (text.length === 0) return result;
  for (const pair of text.split('&')) {
    const at = pair.indexOf('=');
    const key = decodePart(at < 0 ? pair : pair.slice(0, at));
    if (at < 0 && key.length === 0) continue;
    const value = at < 0 ? '' : decodePart(pair.slice(at + 1));
    const current = result[key];
    if (current === undefined) result[key] = value;
    else if (Array.isArray(current)) current.push(value);
    else result[key] = [current, value];
  }
  return result;
}
