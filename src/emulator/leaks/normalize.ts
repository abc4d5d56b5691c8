/**
 * The text the leak guard searches (pure): a text made comparable to a value, with each of its
 * characters mapped back to where it stood, so a value found in the view is replaced where it was
 * written. The folded view is NFKC (full-width digits and letters, ligatures), lower case by code
 * point (`İ` becomes `i`, whatever lengths lower-casing makes), JSON's `\uXXXX` escapes decoded,
 * and whitespace, zero-width characters and soft hyphens dropped. The stripped view only drops
 * whitespace (base64 broken into lines). Both keep offsets: `from[i]` and `to[i]` are where the
 * view's i-th unit came from in the text (start, end exclusive).
 */

export interface View {
  text: string;
  /** Where the view's `i`-th unit came from in the text. */
  from(i: number): number;
  /** Where what it came from ends (exclusive). */
  to(i: number): number;
}

/** Whitespace of every kind (Unicode spaces, line and paragraph separators) and the invisible ones. */
const DROPPED = /^[\s\u00ad\u180e\u200b-\u200d\u2060\ufeff]$/u;
const COMBINING = /^\p{M}$/u;
const HEX4 = /^[0-9a-fA-F]{4}$/;

/** Whether `text` holds only ASCII (the view of an ASCII text is its lower case without whitespace). */
export function isAscii(text: string): boolean {
  return !NON_ASCII.test(text);
}
const NON_ASCII = /[^\x00-\x7f]/;

/** A value as the folded view writes it (what a needle is searched as). */
export function folded(text: string): string {
  // Most forms are ASCII with no backslash: their view is their lower case without whitespace.
  if (isAscii(text) && !text.includes('\\')) return text.toLowerCase().replace(ASCII_WHITESPACE, '');
  return foldedView(text).text;
}
const ASCII_WHITESPACE = /[ \t\n\v\f\r]/g;
const ASCII_SPACE = /[ \t\n\v\f\r]/;
const ASCII_SPACES = ASCII_WHITESPACE;

/** The folded view of `text` (see the file's comment). */
export function foldedView(text: string): View {
  // An ASCII text with no escape (most are) is its lower case without whitespace: no loop in JS.
  if (isAscii(text) && !text.includes('\\')) return spacesDropped(text.toLowerCase());
  let out = '';
  const from: number[] = [];
  const to: number[] = [];
  const push = (units: string, start: number, end: number) => {
    out += units;
    for (let k = 0; k < units.length; k++) {
      from.push(start);
      to.push(end);
    }
  };
  let i = 0;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code < 128 && code !== 92 && !combiningAt(text, i + 1)) {
      // ASCII but the backslash: lower case, whitespace dropped.
      if (!(code === 32 || (code >= 9 && code <= 13)))
        push(code >= 65 && code <= 90 ? String.fromCharCode(code + 32) : text[i]!, i, i + 1);
      i++;
      continue;
    }
    const [chunk, end] = characterAt(text, i);
    if (!DROPPED.test(chunk)) push(foldChunk(chunk), i, end);
    i = end;
  }
  return { text: out, from: (i) => from[i]!, to: (i) => to[i]! };
}

/** Whether a combining mark stands at `at` (it belongs to the character before). */
function combiningAt(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  return code >= 0x300 && COMBINING.test(String.fromCodePoint(text.codePointAt(at)!));
}

/** The stripped view of `text`: ASCII whitespace dropped, nothing else changed (base64 in lines). */
export function strippedView(text: string): View {
  return spacesDropped(text);
}

/**
 * `text` (of the same length as the text it stands for) without its ASCII whitespace; where each
 * unit came from is worked out only when first asked (a hit: rare).
 */
function spacesDropped(text: string): View {
  if (!ASCII_SPACE.test(text)) return { text, from: (i) => i, to: (i) => i + 1 };
  const view = text.replace(ASCII_SPACES, '');
  let kept: Int32Array | undefined;
  const from = (i: number) => {
    kept ??= keptUnits(text, view.length);
    return kept[i]!;
  };
  return { text: view, from, to: (i) => from(i) + 1 };
}

/** The offsets of the units of `text` that are not ASCII whitespace, in order. */
function keptUnits(text: string, count: number): Int32Array {
  const kept = new Int32Array(count);
  let k = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code !== 32 && (code < 9 || code > 13)) kept[k++] = i;
  }
  return kept;
}

/**
 * The character at `at` with the combining marks after it (so NFKC composes it), a JSON `\uXXXX`
 * escape decoded (a pair of them for a surrogate pair), and where it ends in the text.
 */
function characterAt(text: string, at: number): [string, number] {
  let char: string;
  let end: number;
  const escaped = escapeAt(text, at);
  if (escaped !== undefined) {
    [char, end] = escaped;
  } else {
    const point = text.codePointAt(at)!;
    char = String.fromCodePoint(point);
    end = at + char.length;
  }
  while (end < text.length) {
    const next = escapeAt(text, end) ?? [String.fromCodePoint(text.codePointAt(end)!), 0];
    if (!COMBINING.test(next[0])) break;
    char += next[0];
    end = next[1] || end + next[0].length;
  }
  return [char, end];
}

/** A `\uXXXX` escape at `at` (two for a surrogate pair): the character and where the escape ends. */
function escapeAt(text: string, at: number): [string, number] | undefined {
  if (text.charCodeAt(at) !== 92 || text[at + 1] !== 'u') return undefined;
  const hex = text.slice(at + 2, at + 6);
  if (!HEX4.test(hex)) return undefined;
  const unit = Number.parseInt(hex, 16);
  if (unit >= 0xd800 && unit <= 0xdbff && text[at + 6] === '\\' && text[at + 7] === 'u') {
    const low = text.slice(at + 8, at + 12);
    if (HEX4.test(low)) return [String.fromCharCode(unit, Number.parseInt(low, 16)), at + 12];
  }
  return [String.fromCharCode(unit), at + 6];
}

/** One character (with its marks) compatibility-composed and lower-cased; `i` and a dot above is `i`. */
function foldChunk(chunk: string): string {
  const folded = chunk.normalize('NFKC').toLowerCase().normalize('NFKC');
  if (DROPPED.test(folded)) return '';
  return folded.includes('i\u0307') ? folded.replaceAll('i\u0307', 'i') : folded;
}
