/**
 * Detokenization expressions (pure): `{{ <token_id> }}`, spaces optional, anywhere in a JSON value
 * or string. A string that is exactly one expression becomes the token's data itself (an object
 * stays an object); an expression inside a larger string is replaced by the data as text (complex
 * data as its JSON). Only values are searched, never object keys.
 *
 * Every occurrence is replaced, so a few bytes of expressions can stand for gigabytes of data: the
 * substitutions take a limit and count the output's bytes as they go, refusing (ExpansionLimitError)
 * before the replacement that would cross it is built.
 */
import { TOKEN_ID_SOURCE } from '../api/patterns.js';
import { MAX_DEPTH } from '../lib/json-depth.js';

const EXPRESSION = new RegExp(`\\{\\{\\s*(${TOKEN_ID_SOURCE})\\s*\\}\\}`, 'g');
const WHOLE = new RegExp(`^\\{\\{\\s*(${TOKEN_ID_SOURCE})\\s*\\}\\}$`);

/** The output would pass `limitBytes`: thrown before the value that crosses it is built. */
export class ExpansionLimitError extends Error {
  constructor(readonly limitBytes: number) {
    super(`the detokenized value would be over ${limitBytes} bytes`);
    this.name = 'ExpansionLimitError';
  }
}

/** The distinct token ids referenced anywhere in `value`, in order of first appearance. */
export function findTokenIds(value: unknown): string[] {
  return countExpressions(value).ids;
}

/** What a value's expressions reference: distinct ids (in order of first appearance) and occurrences. */
export interface ExpressionCount {
  ids: string[];
  occurrences: number;
}

/**
 * Counts the expressions in `value`, stopping once past either bound (the caller refuses the
 * value then): a 50 MB body of distinct expressions would otherwise become millions of ids.
 */
export function countExpressions(
  value: unknown,
  bounds: { ids: number; occurrences: number } = { ids: Infinity, occurrences: Infinity },
): ExpressionCount {
  const ids = new Set<string>();
  let occurrences = 0;
  const past = () => ids.size > bounds.ids || occurrences > bounds.occurrences;
  walkStrings(value, (text) => {
    // Most strings hold no expression: one search rules them out, cheaper than a match iterator.
    if (!text.includes('{{')) return false;
    for (const match of text.matchAll(EXPRESSION)) {
      ids.add(match[1]!);
      occurrences++;
      if (past()) return true;
    }
    return false;
  });
  return { ids: [...ids], occurrences };
}

/**
 * Replaces every expression using `data` (every id found must be in it). Only the objects and
 * arrays on the way to a replaced string are copied; the rest is shared with `value`, which is
 * never changed. The output's size as JSON is counted from `value`'s and may not pass `limitBytes`.
 */
export function substitute(value: unknown, data: ReadonlyMap<string, unknown>, limitBytes = Infinity): unknown {
  const budget = new Budget(limitBytes, () => jsonBytes(value));
  const replacements = new Replacements(data, 'json');
  return mapStrings(value, (text) => replaceIn(text, replacements, budget));
}

/**
 * Like `substitute` on one string taken as raw text (a text body): its size is counted in UTF-8
 * bytes as sent, not as JSON. A text that is exactly one expression becomes the data itself.
 */
export function substituteInText(text: string, data: ReadonlyMap<string, unknown>, limitBytes = Infinity): unknown {
  const budget = new Budget(limitBytes, () => Buffer.byteLength(text));
  return replaceIn(text, new Replacements(data, 'text'), budget);
}

/**
 * Like `substitute`, on JSON text rather than a parsed value, leaving every byte that holds no
 * expression as it was: whitespace, key order and numbers (a 20-digit integer keeps its digits)
 * survive. Only string values are touched, never keys. `text` must be valid JSON.
 */
export function substituteInJsonText(text: string, data: ReadonlyMap<string, unknown>, limitBytes = Infinity): string {
  const budget = new Budget(limitBytes, () => Buffer.byteLength(text));
  const replacements = new Replacements(data, 'json');
  let result = '';
  let at = 0;
  for (let i = text.indexOf('"'); i >= 0; i = text.indexOf('"', i + 1)) {
    const end = closingQuote(text, i);
    const token = text.slice(i, end + 1);
    let next = end + 1;
    while (next < text.length && /\s/.test(text[next]!)) next++;
    const isKey = text[next] === ':';
    if (!isKey && token.includes('{{')) {
      const value = JSON.parse(token) as string;
      const replaced = replaceIn(value, replacements, budget);
      if (replaced !== value) {
        result += text.slice(at, i) + JSON.stringify(replaced);
        at = end + 1;
      }
    }
    i = end;
  }
  return result + text.slice(at);
}

/** The index of the quote closing the JSON string opened at `open` (escaped quotes skipped). */
function closingQuote(text: string, open: number): number {
  let end = text.indexOf('"', open + 1);
  while (end > 0 && isEscaped(text, end)) end = text.indexOf('"', end + 1);
  return end < 0 ? text.length : end;
}

/** Whether the character at `at` follows an odd run of backslashes. */
function isEscaped(text: string, at: number): boolean {
  let backslashes = 0;
  while (text[at - 1 - backslashes] === '\\') backslashes++;
  return backslashes % 2 === 1;
}

/** One string with its expressions replaced, each replacement's bytes counted before it is made. */
function replaceIn(text: string, replacements: Replacements, budget: Budget): unknown {
  if (!text.includes('{{')) return text;
  const whole = WHOLE.exec(text);
  if (whole) {
    const { value, bytes } = replacements.whole(whole[1]!);
    budget.add(bytes - replacements.wholeSizeOf(text));
    return value;
  }
  return text.replace(EXPRESSION, (expression, id: string) => {
    const { text: inserted, bytes } = replacements.inline(id);
    budget.add(bytes - replacements.expressionSize(expression));
    return inserted;
  });
}

/**
 * The output's running size: what the input takes (measured once the first replacement is
 * counted: a value without expressions costs nothing) plus what each replacement adds.
 */
class Budget {
  private used: number | undefined;

  constructor(
    private readonly limitBytes: number,
    private readonly baseBytes: () => number,
  ) {}

  add(bytes: number): void {
    if (this.limitBytes === Infinity) return;
    this.used = (this.used ?? this.baseBytes()) + bytes;
    if (this.used > this.limitBytes) throw new ExpansionLimitError(this.limitBytes);
  }
}

/**
 * What each token's expressions become and the bytes they take, worked out once per token: in a
 * JSON output ('json') a string counts as JSON-escaped, in a text output ('text') as its UTF-8.
 */
class Replacements {
  private readonly inlined = new Map<string, { text: string; bytes: number }>();
  private readonly wholes = new Map<string, { value: unknown; bytes: number }>();
  /** By expression text: a body repeats the same few expressions, measured once each. */
  private readonly expressions = new Map<string, number>();

  constructor(
    private readonly data: ReadonlyMap<string, unknown>,
    private readonly measure: 'json' | 'text',
  ) {}

  /** A string that is exactly the expression: the data itself. */
  whole(id: string): { value: unknown; bytes: number } {
    let found = this.wholes.get(id);
    if (!found) {
      const value = lookup(this.data, id);
      const bytes = this.measure === 'json' ? jsonBytes(value) : this.inline(id).bytes;
      found = { value, bytes };
      this.wholes.set(id, found);
    }
    return found;
  }

  /** An expression inside a larger string: the data as text. */
  inline(id: string): { text: string; bytes: number } {
    let found = this.inlined.get(id);
    if (!found) {
      const value = lookup(this.data, id);
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      found = { text, bytes: this.sizeOf(text) };
      this.inlined.set(id, found);
    }
    return found;
  }

  /** The bytes `text` takes in the output (inside a JSON string: escaped, quotes left out). */
  sizeOf(text: string): number {
    return this.measure === 'json' ? jsonBytes(text) - 2 : Buffer.byteLength(text);
  }

  /** The bytes an expression takes where it stands (what replacing it saves). */
  expressionSize(expression: string): number {
    let bytes = this.expressions.get(expression);
    if (bytes === undefined) {
      bytes = this.sizeOf(expression);
      this.expressions.set(expression, bytes);
    }
    return bytes;
  }

  /** The bytes a whole string takes (in JSON: escaped, with its quotes). */
  wholeSizeOf(text: string): number {
    return this.measure === 'json' ? jsonBytes(text) : Buffer.byteLength(text);
  }
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '');
}

function lookup(data: ReadonlyMap<string, unknown>, id: string): unknown {
  if (!data.has(id)) throw new Error(`no data for token ${id}`);
  return data.get(id);
}

/**
 * Visits every string in `value`, in document order, until `visit` says stop, without recursion:
 * a proxy body is searched for expressions before anything bounds its nesting, and it may be
 * nested 100,000 levels deep.
 * `for...in` (JSON values own all their keys) over an object: V8 enumerates a large object's keys
 * in a third of the time `Object.values` takes.
 */
function walkStrings(value: unknown, visit: (text: string) => boolean): void {
  const stack: unknown[] = [value];
  const children: unknown[] = [];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === 'string') {
      if (visit(node)) return;
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) pushIfSearched(stack, node[i]);
    } else if (typeof node === 'object' && node !== null) {
      for (const key in node) children.push((node as Record<string, unknown>)[key]);
      for (let i = children.length - 1; i >= 0; i--) pushIfSearched(stack, children[i]);
      children.length = 0;
    }
  }
}

/** Numbers, booleans and null hold no expression: left off the stack. */
function pushIfSearched(stack: unknown[], child: unknown): void {
  if (typeof child === 'string' || (typeof child === 'object' && child !== null)) stack.push(child);
}

/**
 * Recursive: callers bound nesting first (`exceedsDepth`); past MAX_DEPTH it throws rather than
 * overflow. Copies on write: a container is copied only once a value inside it changed.
 */
function mapStrings(value: unknown, map: (text: string) => unknown, depth = 0): unknown {
  if (typeof value === 'string') return map(value);
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_DEPTH) throw new RangeError(`the value is nested deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const mapped = mapStrings(item, map, depth + 1);
      if (mapped !== item) {
        copy ??= value.slice();
        copy[i] = mapped;
      }
    }
    return copy ?? value;
  }
  const object = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const key in object) {
    const item = object[key];
    const mapped = mapStrings(item, map, depth + 1);
    if (mapped === item) continue;
    // Spread defines properties: a key named __proto__ stays a plain own key, never a prototype.
    copy ??= { ...object };
    Object.defineProperty(copy, key, { value: mapped, enumerable: true, writable: true, configurable: true });
  }
  return copy ?? object;
}
