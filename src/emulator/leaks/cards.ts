/**
 * Card numbers in a text (pure): a token's card number written in groups, and the Luhn scan of card
 * numbers from no token, with the mask that replaces them.
 */

import type { LeakForm } from '../../api/events.js';

export interface CardHit {
  last4: string;
  start: number;
  end: number;
}

/** A token's card number where it stands in a text. */
export interface GroupedHit {
  tokenId: string;
  form: LeakForm;
  start: number;
  end: number;
}

/**
 * What may stand between the digit groups of a card number from no token: a space, dash, dot, plus
 * (a form's space), no-break space, or a space, plus or dash percent-encoded.
 */
const SEPARATOR = String.raw`(?:[ .+\-\u00a0]|%2[0bBdD])`;
/**
 * Between the groups of a token's card number, more is looked for (its digits are known, so a
 * wider net costs no false positive): also `_ / ,`, tabs and line breaks, thin, narrow and other
 * Unicode spaces, zero-width characters, and full-width digits for the digits.
 */
const TOKEN_SEPARATOR = String.raw`(?:[\s.+\-_/,\u00ad\u200b-\u200d\u2060\ufeff]|%2[0bBdD])`;
const TOKEN_DIGIT = String.raw`[0-9\uff10-\uff19]`;
/** A digit run with at least one separator in it (a token's card number written in groups). */
const GROUPED_DIGITS = new RegExp(`${TOKEN_DIGIT}+(?:${TOKEN_SEPARATOR}+${TOKEN_DIGIT}+)+`, 'g');
const TOKEN_SEPARATORS = new RegExp(TOKEN_SEPARATOR, 'g');
const FULL_WIDTH = /[\uff10-\uff19]/g;
/** The separators of a run, to strip it to its digits. */
const SEPARATORS = new RegExp(SEPARATOR, 'g');
const DIGIT_RUNS = new RegExp(String.raw`\d+(?:${SEPARATOR}\d+)*`, 'g');

/** Card values written in groups: each digit run with separators, its digits compared with `cards` (digits -> token). */
export function findGroupedCards(text: string, cards: ReadonlyMap<string, string>, hits: GroupedHit[]): void {
  for (const match of text.matchAll(GROUPED_DIGITS)) {
    const run = match[0];
    const digits = run
      .replace(TOKEN_SEPARATORS, '')
      .replace(FULL_WIDTH, (digit) => String.fromCharCode(digit.charCodeAt(0) - 0xff10 + 48));
    if (digits.length < 13) continue;
    for (const [card, tokenId] of cards) {
      const at = digits.indexOf(card);
      if (at < 0) continue;
      const [start, end] = spanOfDigits(run, at, card.length);
      const span = run.slice(start, end);
      if (/^\d+$/.test(span)) continue; // Found as it is by the plain needle.
      hits.push({ tokenId, form: groupedForm(span), start: match.index + start, end: match.index + end });
    }
  }
}

/** How a token's card number stands in groups: spaced (a space, a form's `+`, `%20`), dashed, or other separators. */
export function groupedForm(span: string): LeakForm {
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

/** `text` with each hit (in order, none overlapping) replaced by what `by` makes of it. */
export function replaceHits<H extends { start: number; end: number }>(
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
    const digit = (code >= 48 && code <= 57) || (code >= 0xff10 && code <= 0xff19);
    if (code === 37 || !digit) continue;
    if (seen === at) start = i;
    seen++;
    if (seen === at + length) return [start, i + 1];
  }
  return [start, run.length];
}
