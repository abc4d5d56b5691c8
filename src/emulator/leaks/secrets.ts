/**
 * The plaintext of one call (pure): the values its detokenizations revealed, and every form of them
 * the leak guard looks for in what leaves the call (its console lines, events, errors, answers,
 * outbound requests, recordings). Values shorter than MIN_SECRET_LENGTH are not looked for: a
 * CVC or an expiry month would be found in every timestamp and count.
 *
 * The needles of every value are built once, as it is added; a text is searched with indexOf,
 * once per needle: case-folded forms (the value, its JSON escaping, percent-encodings, hex) in the
 * text folded once, exact forms (base64 and base64url) in the text as it is. A card number written
 * in groups ("4242 4242 ...", "4242-4242-...") is found by one scan of the text's digit runs.
 */

import type { LeakForm } from '../../api/events.js';

export type { LeakForm };

export interface LeakHit {
  tokenId: string;
  form: LeakForm;
  /** Where in the text (UTF-16 offsets, end exclusive). */
  start: number;
  end: number;
}

export interface CardHit {
  last4: string;
  start: number;
  end: number;
}

/** Values shorter than this (in UTF-16 units) are not looked for: too many false positives. */
export const MIN_SECRET_LENGTH = 6;

interface Needle {
  /** What is searched for (lower-cased for a folded needle). */
  text: string;
  /** The form as written (a folded needle's original case): found as it is, or in another case. */
  written: string;
  tokenId: string;
  form: LeakForm;
  /** All digits: found only where no digit stands right before or after it (not inside a longer number). */
  digits: boolean;
}

/**
 * What may stand between the digit groups of a card number: a space, dash, dot, plus (a form's
 * space), no-break space, or a space, plus or dash percent-encoded.
 */
const SEPARATOR = String.raw`(?:[ .+\-\u00a0]|%2[0bBdD])`;
/** A digit run with at least one separator in it (a card number written in groups). */
const GROUPED_DIGITS = new RegExp(String.raw`\d+(?:${SEPARATOR}\d+)+`, 'g');
/** The separators of a run, to strip it to its digits. */
const SEPARATORS = new RegExp(SEPARATOR, 'g');
const CARD_DIGITS = /^\d{13,19}$/;
const ALL_DIGITS = /^\d+$/;

/**
 * The plaintext values one call (or one run, merged) revealed, by token id, and their derived
 * forms. Adding is rare (a detokenization); finding is on every text that leaves the call.
 */
export class CallSecrets {
  /** Case-folded needles, searched in the text lower-cased: value, JSON, percent, form, hex. */
  private readonly folded = new Map<string, Needle>();
  /** Case-sensitive needles, searched as they are: base64 and base64url (and the folded ones' originals, see find). */
  private readonly exact = new Map<string, Needle>();
  /** Values as typed (their original case), for a text whose lower-casing changes its length. */
  private readonly originals = new Map<string, Needle>();
  /** Card-like values (13-19 digits) by their digits, for grouped forms. */
  private readonly cards = new Map<string, string>();
  private count = 0;

  /** How many values are looked for. */
  get size(): number {
    return this.count;
  }

  /** The length of the longest form looked for (what a streamed scan keeps from one chunk to the next). */
  get longest(): number {
    let longest = 0;
    for (const key of this.folded.keys()) longest = Math.max(longest, key.length);
    for (const key of this.exact.keys()) longest = Math.max(longest, key.length);
    return longest;
  }

  /** The revealed data of a token: its string leaves and numbers (too-short ones ignored). */
  add(value: unknown, tokenId: string): void {
    walkLeaves(value, 0, (leaf) => this.addValue(leaf, tokenId));
  }

  /** Adds every value of `other` (a run-wide set: the recorder's rescan). */
  merge(other: CallSecrets): void {
    for (const [key, needle] of other.folded) if (!this.folded.has(key)) this.folded.set(key, needle);
    for (const [key, needle] of other.exact) if (!this.exact.has(key)) this.exact.set(key, needle);
    for (const [key, needle] of other.originals) if (!this.originals.has(key)) this.originals.set(key, needle);
    for (const [digits, tokenId] of other.cards) if (!this.cards.has(digits)) this.cards.set(digits, tokenId);
    this.count = this.originals.size;
  }

  /** Every place a value or a derived form of it stands in `text`, in order, none overlapping. */
  find(text: string): LeakHit[] {
    if (this.count === 0 || text.length < MIN_SECRET_LENGTH) return [];
    const hits: LeakHit[] = [];
    const lower = text.toLowerCase();
    if (lower.length === text.length) {
      for (const needle of this.folded.values()) collect(lower, needle, hits, text);
    } else {
      // Lower-casing changed the length (a few Unicode letters do): positions would not map back.
      for (const needle of this.originals.values()) collect(text, needle, hits);
    }
    for (const needle of this.exact.values()) collect(text, needle, hits);
    if (this.cards.size > 0) this.findGroupedCards(text, hits);
    return hits.length <= 1 ? hits : disjoint(hits);
  }

  /** `text` with each value found replaced by its token's expression, `{{ token_id }}`. */
  redact(text: string): string {
    return replaceHits(text, this.find(text), (hit) => `{{ ${hit.tokenId} }}`);
  }

  private addValue(value: string, tokenId: string): void {
    if (value.length < MIN_SECRET_LENGTH || this.originals.has(value)) return;
    this.originals.set(value, { text: value, written: value, tokenId, form: 'plain', digits: ALL_DIGITS.test(value) });
    this.count = this.originals.size;
    const fold = (written: string, form: LeakForm) => {
      const key = written.toLowerCase();
      if (!this.folded.has(key))
        this.folded.set(key, { text: key, written, tokenId, form, digits: ALL_DIGITS.test(key) });
    };
    fold(value, 'plain');
    const json = JSON.stringify(value).slice(1, -1);
    // Escaped once, twice (JSON inside a JSON string: a body logged as a field) and three times
    // (a raw result that is a string of JSON of JSON, as its answer writes it).
    for (let level = 0, escaped = json; level < 3 && !this.folded.has(escaped.toLowerCase()); level++) {
      fold(escaped, 'json');
      escaped = JSON.stringify(escaped).slice(1, -1);
    }
    fold(encodeURIComponent(value), 'percent');
    // A form's encoding: spaces as `+` (what encodeURIComponent leaves of !'()* is rare enough to skip).
    if (value.includes(' ')) fold(encodeURIComponent(value).replaceAll('%20', '+'), 'percent');
    const bytes = Buffer.from(value, 'utf8');
    fold(bytes.toString('hex'), 'hex');
    // The same letters composed or decomposed (é as one code point or e and an accent).
    for (const form of ['NFC', 'NFD'] as const) {
      const normalized = value.normalize(form);
      if (normalized !== value) fold(normalized, 'unicode');
    }
    // base64 of the value, and of its JSON escaping when that differs (base64 of a JSON document).
    const encoded = json === value ? [bytes] : [bytes, Buffer.from(json, 'utf8')];
    for (const text of encoded.flatMap(base64Needles)) {
      if (!this.exact.has(text)) this.exact.set(text, { text, written: text, tokenId, form: 'base64', digits: false });
      const url = text.replaceAll('+', '-').replaceAll('/', '_');
      if (!this.exact.has(url))
        this.exact.set(url, { text: url, written: url, tokenId, form: 'base64url', digits: false });
    }
    if (CARD_DIGITS.test(value) && !this.cards.has(value)) this.cards.set(value, tokenId);
  }

  /** Card values written in groups: each digit run with separators, its digits compared. */
  private findGroupedCards(text: string, hits: LeakHit[]): void {
    for (const match of text.matchAll(GROUPED_DIGITS)) {
      const run = match[0];
      const digits = run.replace(SEPARATORS, '');
      if (digits.length < 13) continue;
      for (const [card, tokenId] of this.cards) {
        const at = digits.indexOf(card);
        if (at < 0) continue;
        const [start, end] = spanOfDigits(run, at, card.length);
        const span = run.slice(start, end);
        if (/^\d+$/.test(span)) continue; // Found as it is by the plain needle.
        hits.push({ tokenId, form: groupedForm(span), start: match.index + start, end: match.index + end });
      }
    }
  }
}

/** How a token's card number stands in groups: spaced (a space, a form's `+`, `%20`), dashed, or other separators. */
function groupedForm(span: string): LeakForm {
  if (/^[\d ]+$/.test(span) || /^\d+(?:(?:\+|%20)\d+)+$/.test(span)) return 'card-spaced';
  if (/^[\d-]+$/.test(span)) return 'card-dashed';
  return 'card-grouped';
}

/**
 * Luhn-valid card numbers (13-19 digits; spaces, dashes, dots, `+` or their percent-encodings
 * between groups) that begin as an issuer's do (2-6; 13 digits: 4), not part of a longer digit run
 * nor of an identifier (glued to letters, a UUID's dash-joined groups), not a phone number (after a
 * `+`), nor in the `allow` list (declared test cards, digits only).
 */
export function scanCards(text: string, allow?: ReadonlySet<string>): CardHit[] {
  const hits: CardHit[] = [];
  for (const match of text.matchAll(DIGIT_RUNS)) {
    const run = match[0];
    if (run.length < 13) continue;
    const digits = /^\d+$/.test(run) ? run : run.replace(SEPARATORS, '');
    if (!cardLike(digits) || allow?.has(digits)) continue;
    const start = match.index;
    const end = start + run.length;
    if (joined(text, start - 1, -1) || joined(text, end, 1) || text[start - 1] === '+') continue;
    hits.push({ last4: digits.slice(-4), start, end });
  }
  return hits;
}

const DIGIT_RUNS = new RegExp(String.raw`\d+(?:${SEPARATOR}\d+)*`, 'g');

function cardLike(digits: string): boolean {
  if (digits.length < 13 || digits.length > 19) return false;
  const first = digits.charCodeAt(0);
  if (first < 50 || first > 54 || (digits.length === 13 && first !== 52)) return false;
  return luhn(digits);
}

/** Whether the character at `at` joins the run to more of an identifier: a letter or digit, or a dash before one. */
function joined(text: string, at: number, step: 1 | -1): boolean {
  const char = text[at];
  if (char === undefined) return false;
  if (/[A-Za-z0-9_]/.test(char)) return true;
  return char === '-' && /[A-Za-z0-9_]/.test(text[at + step] ?? '');
}

/** `text` with each card number scanCards finds replaced by `[card ****4242]`. */
export function maskCards(text: string, allow?: ReadonlySet<string>): string {
  return replaceHits(text, scanCards(text, allow), (hit) => `[card ****${hit.last4}]`);
}

/** Whether `digits` pass the Luhn check. */
export function luhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let digit = digits.charCodeAt(i) - 48;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    double = !double;
  }
  return sum % 10 === 0;
}

/**
 * The base64 text of `bytes` wherever they stand in a longer base64 text: one needle per alignment
 * (0, 1 or 2 bytes before them in their group of 3), holding only the characters made of their
 * bits alone, so `base64(prefix + value + suffix)` holds one of them whatever prefix and suffix are.
 */
function base64Needles(bytes: Buffer): string[] {
  const needles: string[] = [];
  // One buffer with two bytes before the value: each alignment is a view of it, not a copy.
  const padded = Buffer.alloc(bytes.length + 2);
  bytes.copy(padded, 2);
  for (let offset = 0; offset < 3; offset++) {
    const encoded = padded.subarray(2 - offset).toString('base64');
    const start = Math.ceil((offset * 8) / 6);
    const end = Math.floor(((offset + bytes.length) * 8) / 6);
    if (end - start >= MIN_SECRET_LENGTH) needles.push(encoded.slice(start, end));
  }
  return needles;
}

function collect(haystack: string, needle: Needle, hits: LeakHit[], original?: string): void {
  let at = haystack.indexOf(needle.text);
  while (at >= 0) {
    const end = at + needle.text.length;
    if (needle.digits && (isDigit(haystack, at - 1) || isDigit(haystack, end))) {
      at = haystack.indexOf(needle.text, at + 1);
      continue;
    }
    // Another case of the value itself is its own form; hex or percent-encoding in capitals is still that.
    const form =
      original !== undefined && needle.form === 'plain' && !original.startsWith(needle.written, at)
        ? 'case'
        : needle.form;
    hits.push({ tokenId: needle.tokenId, form, start: at, end });
    at = haystack.indexOf(needle.text, end);
  }
}

/** The hits in order of position, the longest first where they start together, overlaps dropped. */
function disjoint(hits: LeakHit[]): LeakHit[] {
  hits.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: LeakHit[] = [];
  let reached = -1;
  for (const hit of hits) {
    if (hit.start < reached) continue;
    kept.push(hit);
    reached = hit.end;
  }
  return kept;
}

function replaceHits<H extends { start: number; end: number }>(
  text: string,
  hits: H[],
  by: (hit: H) => string,
): string {
  if (hits.length === 0) return text;
  let out = '';
  let from = 0;
  for (const hit of hits) {
    out += text.slice(from, hit.start) + by(hit);
    from = hit.end;
  }
  return out + text.slice(from);
}

/** Where `length` digits from the `at`-th digit of `run` stand in it (separators between them included). */
function spanOfDigits(run: string, at: number, length: number): [number, number] {
  let seen = 0;
  let start = -1;
  for (let i = 0; i < run.length; i++) {
    const code = run.charCodeAt(i);
    if (code === 37) i += 2; // A percent-encoded separator: its digits are not the number's.
    if (code < 48 || code > 57) continue;
    if (seen === at) start = i;
    seen++;
    if (seen === at + length) return [start, i + 1];
  }
  return [start, run.length];
}

/** Calls `leaf` with every string leaf and number of `value` (numbers as JSON writes them). */
function walkLeaves(value: unknown, depth: number, leaf: (text: string) => void): void {
  if (typeof value === 'string') leaf(value);
  else if (typeof value === 'number' || typeof value === 'bigint') leaf(String(value));
  else if (depth < 64 && typeof value === 'object' && value !== null) {
    for (const item of Array.isArray(value) ? value : Object.values(value)) walkLeaves(item, depth + 1, leaf);
  }
}

function isDigit(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  return code >= 48 && code <= 57;
}
