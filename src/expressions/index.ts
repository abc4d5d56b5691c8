/**
 * Detokenization expressions (pure): `{{ <token_id> }}`, spaces optional, anywhere in a JSON value
 * or string. A string that is exactly one expression becomes the token's data itself (an object
 * stays an object); an expression inside a larger string is replaced by the data as text (complex
 * data as its JSON). Only values are searched, never object keys.
 */
import { TOKEN_ID_SOURCE } from '../api/patterns.js';
import { MAX_DEPTH } from '../lib/json-depth.js';

const EXPRESSION = new RegExp(`\\{\\{\\s*(${TOKEN_ID_SOURCE})\\s*\\}\\}`, 'g');
const WHOLE = new RegExp(`^\\{\\{\\s*(${TOKEN_ID_SOURCE})\\s*\\}\\}$`);

/** The distinct token ids referenced anywhere in `value`, in order of first appearance. */
export function findTokenIds(value: unknown): string[] {
  const ids = new Set<string>();
  walkStrings(value, (text) => {
    // Most strings hold no expression: one search rules them out, cheaper than a match iterator.
    if (!text.includes('{{')) return;
    for (const match of text.matchAll(EXPRESSION)) ids.add(match[1]!);
  });
  return [...ids];
}

/** Replaces every expression using `data` (every id found must be in it). */
export function substitute(value: unknown, data: ReadonlyMap<string, unknown>): unknown {
  return mapStrings(value, (text) => {
    const whole = WHOLE.exec(text);
    if (whole) return lookup(data, whole[1]!);
    return text.replace(EXPRESSION, (_expression, id: string) => {
      const found = lookup(data, id);
      return typeof found === 'string' ? found : JSON.stringify(found);
    });
  });
}

function lookup(data: ReadonlyMap<string, unknown>, id: string): unknown {
  if (!data.has(id)) throw new Error(`no data for token ${id}`);
  return data.get(id);
}

/**
 * Visits every string in `value`, in document order, without recursion: a proxy body is searched
 * for expressions before anything bounds its nesting, and it may be nested 100,000 levels deep.
 */
function walkStrings(value: unknown, visit: (text: string) => void): void {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === 'string') visit(node);
    else if (typeof node === 'object' && node !== null) {
      const children = Array.isArray(node) ? node : Object.values(node);
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
    }
  }
}

/** Recursive: callers bound nesting first (`exceedsDepth`); past MAX_DEPTH it throws rather than overflow. */
function mapStrings(value: unknown, map: (text: string) => unknown, depth = 0): unknown {
  if (typeof value === 'string') return map(value);
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_DEPTH) throw new RangeError(`the value is nested deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, map, depth + 1));
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    // defineProperty: a key named __proto__ stays a plain key, never a prototype.
    Object.defineProperty(result, key, {
      value: mapStrings(item, map, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return result;
}

/**
 * Like `substitute`, on JSON text rather than a parsed value, leaving every byte that holds no
 * expression as it was: whitespace, key order and numbers (a 20-digit integer keeps its digits)
 * survive. Only string values are touched, never keys. `text` must be valid JSON.
 */
export function substituteInJsonText(text: string, data: ReadonlyMap<string, unknown>): string {
  let result = '';
  let at = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '"') continue;
    let end = i + 1;
    while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
    const token = text.slice(i, end + 1);
    let next = end + 1;
    while (next < text.length && /\s/.test(text[next]!)) next++;
    const isKey = text[next] === ':';
    if (!isKey && token.includes('{{')) {
      const value = JSON.parse(token) as string;
      const replaced = substitute(value, data);
      if (replaced !== value) {
        result += text.slice(at, i) + JSON.stringify(replaced);
        at = end + 1;
      }
    }
    i = end;
  }
  return result + text.slice(at);
}
