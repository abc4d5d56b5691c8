/**
 * The plaintext of one call, or of one code version (pure): the values detokenizations revealed,
 * and every form of them the leak guard looks for in what leaves the call (its console lines,
 * events, errors, answers, outbound requests, recordings). Values shorter than MIN_SECRET_LENGTH
 * are not looked for: a CVC or an expiry month would be found in every timestamp and count.
 *
 * The needles of every value are built once, as it is added. A text is first pre-checked: an ASCII
 * text with no `\u` escape and none of the needles' first characters (two probes of four each) is
 * not searched further. Otherwise the case-folded needles (the value, its JSON escaping,
 * percent-encodings, hex) are searched in the folded view of the text (normalize.ts: NFKC, lower
 * case by code point, JSON escapes decoded, whitespace and zero-width characters dropped), the exact
 * ones (base64 and base64url) in the text without its whitespace, each hit mapped back to where it
 * was written. A card number written in groups is found by one scan of the text's digit runs (cards.ts).
 */

import type { LeakForm } from '../../api/events.js';
import { findGroupedCards, groupedForm, replaceHits } from './cards.js';
import { foldedView, folded as fold, isAscii, strippedView, type View } from './normalize.js';
import { isWord } from './vocabulary.js';

export type { LeakForm };
export { type CardHit, luhn, maskCards, scanCards } from './cards.js';

export interface LeakHit {
  tokenId: string;
  form: LeakForm;
  /** Where in the text (UTF-16 offsets, end exclusive). */
  start: number;
  end: number;
}

/** Values shorter than this (in UTF-16 units) are not looked for: too many false positives. */
export const MIN_SECRET_LENGTH = 6;

/** How much a set keeps (a code version's): past it, the oldest values are forgotten first. */
export interface SecretsBound {
  values: number;
  /** The UTF-16 units of its values and their needles, times two. */
  bytes: number;
}

interface Needle {
  /** What is searched for: the folded view of the form, or the form as it is for an exact needle. */
  text: string;
  /** The form as written. */
  written: string;
  tokenId: string;
  form: LeakForm;
  /** All digits: found only where no digit stands right before or after it (not inside a longer number). */
  digits: boolean;
  /** A common word or a header's name or value (vocabulary.ts): not looked for in headers, elsewhere only as a word. */
  word: boolean;
  /** The value it is a form of. */
  value: string;
}

interface Entry {
  tokenId: string;
  needles: Needle[];
  bytes: number;
}

const ALL_DIGITS = /^\d+$/;
const CARD_DIGITS = /^\d{13,19}$/;

/**
 * The plaintext values one call (or one code version, or one run, merged) revealed, by token id,
 * and their derived forms. Adding is rare (a detokenization); finding is on every text that leaves.
 */
export class CallSecrets {
  /** By value, oldest first. */
  private readonly entries = new Map<string, Entry>();
  private readonly folded = new Map<string, Needle>();
  private readonly exact = new Map<string, Needle>();
  /** Card-like values (13-19 digits) by their digits, for grouped forms. */
  private readonly cards = new Map<string, string>();
  /** The sets this one's values also go to, and are searched with it (its code version's). */
  private readonly shared: CallSecrets[] = [];
  private probes: Probes | undefined;
  private bytes = 0;

  constructor(private readonly bound?: SecretsBound) {}

  /** A set searching all of `sets` (adding to it adds to none of them). */
  static union(sets: readonly CallSecrets[]): CallSecrets {
    const union = new CallSecrets();
    for (const set of sets)
      for (const one of [set, ...set.shared]) if (!union.shared.includes(one)) union.shared.push(one);
    return union;
  }

  /** How many values are looked for (its own and those of the sets it shares with). */
  get size(): number {
    return this.shared.reduce((size, set) => size + set.entries.size, this.entries.size);
  }

  /** The length of the longest form looked for (what a streamed scan keeps from one chunk to the next). */
  get longest(): number {
    let longest = 0;
    for (const set of [this, ...this.shared])
      for (const entry of set.entries.values())
        for (const needle of entry.needles) longest = Math.max(longest, needle.written.length);
    return longest;
  }

  /** The revealed data of a token: its string leaves and numbers (too-short ones ignored). */
  add(value: unknown, tokenId: string): void {
    walkLeaves(value, 0, (leaf) => this.addValue(leaf, tokenId));
  }

  /** Adds every value of `other` and of the sets it shares with (a run-wide set: the recorder's rescan). */
  merge(other: CallSecrets): void {
    for (const set of [other, ...other.shared])
      for (const [value, entry] of set.entries) if (!this.entries.has(value)) this.insert(value, entry);
  }

  /** From now on, what this set is given goes to `owner` too, and it is searched with `owner` (which gets what it has). */
  share(owner: CallSecrets): void {
    if (owner === this || this.shared.includes(owner)) return;
    owner.merge(this);
    this.shared.push(owner);
  }

  /** Every place a value or a derived form of it stands in `text`, in order, none overlapping. */
  find(text: string, options: { headers?: boolean } = {}): LeakHit[] {
    if (text.length < MIN_SECRET_LENGTH || this.size === 0) return [];
    const hits: LeakHit[] = [];
    const views: Views = { text };
    const suspicious = !isAscii(text) || text.includes('\\u');
    const lower = suspicious ? '' : text.toLowerCase();
    for (const set of [this, ...this.shared]) {
      if (set.entries.size === 0) continue;
      // A set this one shares with holds this one's values too: searched once.
      const skip = set === this ? undefined : this.entries;
      set.probes ??= probesOf(set.entries.values());
      const { probes } = set;
      if (
        suspicious ||
        probes.folded.some((probe) => lower.includes(probe)) ||
        probes.exact.some((p) => text.includes(p))
      )
        set.search(views, hits, skip, options.headers === true);
      // A card in groups: looked for where its first or last four digits stand together (or any Unicode).
      if (set.cards.size > 0 && (suspicious || probes.cards.some((probe) => text.includes(probe))))
        findGroupedCards(text, set.cards, hits);
    }
    return hits.length <= 1 ? hits : disjoint(hits);
  }

  /** `text` with each value found replaced by its token's expression, `{{ token_id }}`. */
  redact(text: string): string {
    return replaceHits(text, this.find(text), (hit) => `{{ ${hit.tokenId} }}`);
  }

  private search(views: Views, hits: LeakHit[], skip: Map<string, Entry> | undefined, headers: boolean): void {
    views.folded ??= foldedView(views.text);
    for (const needle of this.folded.values()) {
      if (skip?.has(needle.value) || (headers && needle.word)) continue;
      collect(views.folded, needle, views.text, hits);
    }
    views.stripped ??= strippedView(views.text);
    for (const needle of this.exact.values()) {
      if (!skip?.has(needle.value)) collect(views.stripped, needle, views.text, hits);
    }
  }

  /** A value and its needles, made once, in this set and those it shares with. */
  private addValue(value: string, tokenId: string): void {
    if (value.length < MIN_SECRET_LENGTH) return;
    let entry = this.entries.get(value);
    if (!entry) this.insert(value, (entry = { tokenId, ...needlesOf(value, tokenId) }));
    for (const set of this.shared) if (!set.entries.has(value)) set.insert(value, entry);
  }

  private insert(value: string, entry: Entry): void {
    this.entries.set(value, entry);
    this.bytes += entry.bytes;
    for (const needle of entry.needles) {
      const index = needle.form === 'base64' || needle.form === 'base64url' ? this.exact : this.folded;
      if (!index.has(needle.text)) index.set(needle.text, needle);
    }
    if (CARD_DIGITS.test(value) && !this.cards.has(value)) this.cards.set(value, entry.tokenId);
    this.probes = undefined;
    const { bound } = this;
    if (!bound) return;
    while (this.entries.size > 1 && (this.entries.size > bound.values || this.bytes > bound.bytes)) {
      this.remove(this.entries.keys().next().value as string);
    }
  }

  /** Forgets a value and its needles (the oldest, past the bound). */
  private remove(value: string): void {
    const entry = this.entries.get(value);
    if (!entry) return;
    this.entries.delete(value);
    this.bytes -= entry.bytes;
    for (const needle of entry.needles) {
      for (const index of [this.folded, this.exact]) if (index.get(needle.text) === needle) index.delete(needle.text);
    }
    if (this.cards.get(value) === entry.tokenId) this.cards.delete(value);
  }
}

/** The views of one text, made when first needed and shared by every set searched. */
interface Views {
  text: string;
  folded?: View;
  stripped?: View;
}

/** Every needle of a value, and what they weigh. */
function needlesOf(value: string, tokenId: string): { needles: Needle[]; bytes: number } {
  const needles: Needle[] = [];
  const word = isWord(value);
  const seen = new Set<string>();
  const add = (written: string, form: LeakForm, exact = false) => {
    const text = exact ? written : fold(written);
    if (text.length < MIN_SECRET_LENGTH || seen.has(`${exact} ${text}`)) return;
    seen.add(`${exact} ${text}`);
    needles.push({ text, written, tokenId, form, digits: ALL_DIGITS.test(text), word: word && !exact, value });
  };
  add(value, 'plain');
  const json = JSON.stringify(value).slice(1, -1);
  // Escaped once, twice (JSON inside a JSON string: a body logged as a field) and three times
  // (a raw result that is a string of JSON of JSON, as its answer writes it).
  for (let level = 0, escaped = json; level < 3; level++) {
    add(escaped, 'json');
    escaped = JSON.stringify(escaped).slice(1, -1);
  }
  add(encodeURIComponent(value), 'percent');
  // A form's encoding: spaces as `+` (what encodeURIComponent leaves of !'()* is rare enough to skip).
  if (value.includes(' ')) add(encodeURIComponent(value).replaceAll('%20', '+'), 'percent');
  const bytes = Buffer.from(value, 'utf8');
  add(bytes.toString('hex'), 'hex');
  // base64 of the value, and of its JSON escaping when that differs (base64 of a JSON document).
  const encoded = json === value ? [bytes] : [bytes, Buffer.from(json, 'utf8')];
  for (const text of encoded.flatMap(base64Needles)) {
    add(text, 'base64', true);
    add(text.replaceAll('+', '-').replaceAll('/', '_'), 'base64url', true);
  }
  let weight = value.length;
  for (const needle of needles) weight += needle.text.length + needle.written.length;
  return { needles, bytes: weight * 2 };
}

/** What an ASCII text is pre-checked for: needles' first characters (folded, exact), cards' first and last four digits. */
interface Probes {
  folded: string[];
  exact: string[];
  cards: string[];
}

/**
 * Two probes of four characters per needle: its first, and the next (the last four of a shorter
 * one): a needle is searched for only in a text holding one of them (a text breaking both with
 * whitespace is missed, unless it is not ASCII, when every needle is searched).
 */
function probesOf(entries: Iterable<Entry>): Probes {
  const folded = new Set<string>();
  const exact = new Set<string>();
  const cards = new Set<string>();
  for (const entry of entries) {
    for (const needle of entry.needles) {
      const into = needle.form === 'base64' || needle.form === 'base64url' ? exact : folded;
      const { text } = needle;
      into.add(text.slice(0, 4));
      into.add(text.length >= 8 ? text.slice(4, 8) : text.slice(-4));
      if (needle.form === 'plain' && CARD_DIGITS.test(needle.written)) cards.add(text.slice(0, 4)).add(text.slice(-4));
    }
  }
  return { folded: [...folded], exact: [...exact], cards: [...cards] };
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

function collect(view: View, needle: Needle, text: string, hits: LeakHit[]): void {
  const haystack = view.text;
  let at = haystack.indexOf(needle.text);
  while (at >= 0) {
    const last = at + needle.text.length;
    const start = view.from(at);
    const end = view.to(last - 1);
    const glued =
      (needle.digits && (isDigit(haystack, at - 1) || isDigit(haystack, last))) ||
      (needle.word && (isWordChar(text, start - 1) || isWordChar(text, end)));
    if (glued) {
      at = haystack.indexOf(needle.text, at + 1);
      continue;
    }
    hits.push({ tokenId: needle.tokenId, form: formOf(needle, text.slice(start, end)), start, end });
    at = haystack.indexOf(needle.text, last);
  }
}

/** How a needle's value stood where it was found: its own form, or what the view undid (case, escapes, Unicode). */
function formOf(needle: Needle, span: string): LeakForm {
  if (span === needle.written || (needle.form !== 'plain' && needle.form !== 'json')) return needle.form;
  if (span.includes('\\u')) return 'json';
  if (needle.form === 'json') return 'json';
  if (needle.digits && /^[\d\s\u00ad\u200b-\u200d\u2060\ufeff]+$/.test(span)) return groupedForm(span);
  if (span.toLowerCase() === needle.written.toLowerCase()) return 'case';
  return 'unicode';
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

/** A letter, digit, `_` or `-`: what would make a word value part of a longer word (or a longer header name). */
function isWordChar(text: string, at: number): boolean {
  const char = text[at];
  return char !== undefined && /[\p{L}\p{N}_-]/u.test(char);
}
