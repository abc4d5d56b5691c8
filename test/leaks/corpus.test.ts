import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LeakGuard } from '../../src/emulator/leaks/guard.js';
import { decoded } from '../../src/emulator/leaks/charset.js';
import { CallSecrets, type LeakForm } from '../../src/emulator/leaks/secrets.js';

/**
 * The attack corpus at the level of the finder (the same through real reactors: attacks.test.ts):
 * forms the guard must find, the misses it has (asserted, so a change that finds one says so; each
 * is in README "Leak guard" with its reason), and texts it must never flag.
 */
const CARD = '4000056655665556';
const SECRET = 'sk_live_51HqJ2-9aB7/cD+e';
const QUOTED = 'pa"ss\\w0rd';
const CAFE = 'Café-crème-secret';
const TEST_CARD = '4242424242424242';

function secrets(): CallSecrets {
  const set = new CallSecrets();
  set.add({ number: CARD, cvc: '123', exp_month: 12 }, 'tok_card');
  set.add(SECRET, 'tok_key');
  set.add(QUOTED, 'tok_pw');
  set.add(CAFE.normalize('NFC'), 'tok_cafe');
  set.add(42424242, 'tok_n');
  set.add('application', 'tok_word');
  set.add('Content-Length', 'tok_header');
  set.add('İstanbul-Kadıköy', 'tok_dotted');
  return set;
}

const guard = new LeakGuard('fail', [TEST_CARD], () => {});
const groups = (digits: string, by: string) => (digits.match(/.{4}/g) ?? []).join(by);
const b64 = (text: string) => Buffer.from(text).toString('base64');
const hex = (text: string) => Buffer.from(text).toString('hex');
/** Full-width digits and letters (U+FF01-FF5E for ASCII 0x21-0x7E). */
const fullWidth = (text: string) =>
  [...text].map((c) => (c > ' ' && c <= '~' ? String.fromCharCode(c.charCodeAt(0) + 0xfee0) : c)).join('');
/** One character of a JSON string written as its `\u` escape. */
const escapeOne = (text: string, at: number) =>
  `${text.slice(0, at)}\\u${text.charCodeAt(at).toString(16).padStart(4, '0')}${text.slice(at + 1)}`;
/** A body as a UTF-16 answer sends it, read back as its Content-Type (or byte order mark) says. */
const utf16 = (text: string, type: string, mark = '') =>
  decoded(Buffer.from(mark + text, 'utf16le'), { 'content-type': type });
const utf16be = (text: string) =>
  decoded(Buffer.from(text, 'utf16le').swap16(), { 'content-type': 'text/plain; charset=UTF-16BE' });

const FOUND: Array<[string, string, string, LeakForm]> = [
  ['JSON of JSON', JSON.stringify(JSON.stringify({ k: QUOTED })), 'tok_pw', 'json'],
  ['JSON three times', JSON.stringify(JSON.stringify(JSON.stringify(QUOTED))), 'tok_pw', 'json'],
  ['base64 of the JSON of the value', b64(JSON.stringify({ k: QUOTED })), 'tok_pw', 'base64'],
  ['base64 of the JSON of a value JSON leaves alone', b64(JSON.stringify({ k: SECRET })), 'tok_key', 'base64'],
  ['NFD of an NFC value', `name=${CAFE.normalize('NFD')}`, 'tok_cafe', 'unicode'],
  ['a number token as a number', JSON.stringify({ n: 42424242 }), 'tok_n', 'plain'],
  ['upper-case hex', Buffer.from(SECRET).toString('hex').toUpperCase(), 'tok_key', 'hex'],
  ['%2F and %2B in capitals', encodeURIComponent(SECRET), 'tok_key', 'percent'],
  ['%2f and %2b in small letters', encodeURIComponent(SECRET).toLowerCase(), 'tok_key', 'percent'],
  ['a card with dots', `n ${groups(CARD, '.')} x`, 'tok_card', 'card-grouped'],
  ['a card with %20', `n=${groups(CARD, '%20')}`, 'tok_card', 'card-spaced'],
  ['a card with %2D', `n=${groups(CARD, '%2D')}`, 'tok_card', 'card-grouped'],
  ['a card with +', `n=${groups(CARD, '+')}&x=1`, 'tok_card', 'card-spaced'],
  ['a card with no-break spaces', groups(CARD, '\u00a0'), 'tok_card', 'card-grouped'],
  ['a card glued inside longer text', `ref${CARD}x9`, 'tok_card', 'plain'],
  // One İ (U+0130: its lower case is longer) anywhere in the text turns no case-folded form off.
  ['İ and hex', `İ ${hex(SECRET)}`, 'tok_key', 'hex'],
  ['İ and percent-encoding', `İ q=${encodeURIComponent(SECRET)}`, 'tok_key', 'percent'],
  ['İ and JSON escaping', `İ ${JSON.stringify({ k: QUOTED })}`, 'tok_pw', 'json'],
  ['İ and another case', `İ ${SECRET.toUpperCase()}`, 'tok_key', 'case'],
  ['a value holding İ, in small letters', 'name=istanbul-kadıköy', 'tok_dotted', 'unicode'],
  // Card digits joined by any separator, or written in full-width digits.
  ['a card with _', groups(CARD, '_'), 'tok_card', 'card-grouped'],
  ['a card with /', groups(CARD, '/'), 'tok_card', 'card-grouped'],
  ['a card with ,', `n=${groups(CARD, ',')}`, 'tok_card', 'card-grouped'],
  ['a card with tabs', groups(CARD, '\t'), 'tok_card', 'card-grouped'],
  ['a card with line breaks', groups(CARD, '\n'), 'tok_card', 'card-grouped'],
  ['a card with CR LF', groups(CARD, '\r\n'), 'tok_card', 'card-grouped'],
  ['a card with U+200B (zero-width space)', groups(CARD, '\u200b'), 'tok_card', 'card-grouped'],
  ['a card with U+2009 (thin space)', groups(CARD, '\u2009'), 'tok_card', 'card-grouped'],
  ['a card with U+202F (narrow no-break space)', groups(CARD, '\u202f'), 'tok_card', 'card-grouped'],
  ['a card in full-width digits', `card ${fullWidth(CARD)}`, 'tok_card', 'unicode'],
  ['a card in full-width digits, grouped', fullWidth(groups(CARD, ' ')), 'tok_card', 'unicode'],
  // The value itself normalised away: full-width letters, zero-width characters inside it.
  ['the value in full-width letters', fullWidth(SECRET), 'tok_key', 'unicode'],
  ['the value with a zero-width space inside', `${SECRET.slice(0, 5)}\u200b${SECRET.slice(5)}`, 'tok_key', 'unicode'],
  ['the value with a soft hyphen inside', `${SECRET.slice(0, 5)}\u00ad${SECRET.slice(5)}`, 'tok_key', 'unicode'],
  // base64 broken into lines (MIME's 76, PEM's 64, any).
  ['base64 in lines', b64(`prefix ${SECRET} suffix`).replace(/(.{8})/g, '$1\r\n'), 'tok_key', 'base64'],
  ['base64 in lines of 76', b64(`${'x'.repeat(70)}${SECRET}`).replace(/(.{76})/g, '$1\n'), 'tok_key', 'base64'],
  // JSON escapes of any character.
  ['one character \\u-escaped in JSON', `{"k":"${escapeOne(SECRET, 3)}"}`, 'tok_key', 'json'],
  [
    'every character \\u-escaped',
    [...SECRET].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
    'tok_key',
    'json',
  ],
  ['an accent \\u-escaped', `"${CAFE.replace('é', '\\u00e9')}"`, 'tok_cafe', 'json'],
  // The charset the answer declares (a UTF-16 answer is decoded before it is scanned).
  ['a UTF-16LE answer', utf16(JSON.stringify({ k: SECRET }), 'application/json; charset=utf-16le'), 'tok_key', 'plain'],
  ['a UTF-16 answer with a byte order mark', utf16(`card=${CARD}`, 'text/plain', '\ufeff'), 'tok_card', 'plain'],
  ['a UTF-16BE answer', utf16be(`key ${SECRET}`), 'tok_key', 'plain'],
  // A common word is still found standing as a word of a body.
  ['a common-word value standing alone in a body', JSON.stringify({ v: 'application' }), 'tok_word', 'plain'],
];

describe('the corpus: found', () => {
  it.each(FOUND)('%s', (_name, text, tokenId, form) => {
    const hits = secrets().find(text);
    expect(hits.map((hit) => ({ tokenId: hit.tokenId, form: hit.form }))).toContainEqual({ tokenId, form });
    expect(guard.redact(secrets(), text)).toContain(`{{ ${tokenId} }}`);
  });

  it.each([
    ['with dots', '5555.5555.5555.4444'],
    ['with %20', '5555%205555%205555%204444'],
    ['with +', 'cc=5555+5555+5555+4444'],
  ])('a scanned card %s', (_name, text) => {
    expect(guard.findIn(undefined, text)).toEqual([{ form: 'card', last4: '4444' }]);
  });
});

/** Not found, asserted (README "Leak guard", "Not found, and why"). */
const MISSED: Array<[string, string]> = [
  // Each console line is its own event, redacted as it is published: a half is not the value.
  ['the value split across two console lines (one line)', SECRET.slice(0, 12)],
  ['JSON four times', JSON.stringify(JSON.stringify(JSON.stringify(JSON.stringify(QUOTED))))],
  ['every character percent-encoded', [...SECRET].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('')],
  ['reversed', [...SECRET].reverse().join('')],
  ['base64 of the hex', b64(Buffer.from(SECRET).toString('hex'))],
  ['a hash', createHash('sha256').update(SECRET).digest('hex')],
];

describe('the corpus: known misses', () => {
  it.each(MISSED)('%s', (_name, text) => {
    expect(secrets().find(text)).toEqual([]);
  });

  it('a card number from no token glued to letters or digits (read as an identifier)', () => {
    expect(guard.findIn(undefined, 'ref5555555555554444x')).toEqual([]);
  });
});

/** Texts that must never be flagged: 0 false positives, with the call's secrets and a declared test card. */
const CLEAN: Array<[string, string]> = [
  ['UUIDs', '4f1c2a3b-1111-4111-8111-111111111111 550e8400-e29b-41d4-a716-446655440000'],
  ['ISO times', '2026-11-28T00:25:33.123Z 2026-11-28T01:25:33+01:00'],
  ['epoch milliseconds', '1764237600000 1764289133123 2000000000000'],
  ['epoch seconds with a fraction', '1764237600.123456'],
  ['phone numbers', '+4915112345678 +1 415 555 2671 +44 20 7946 0958 (030) 1234 5678 +49.151.1234.5678'],
  ['IBANs', 'DE89 3704 0044 0532 0130 00 GB29NWBK60161331926819 FR14 2004 1010 0505 0001 3M02 606'],
  ['16-digit order numbers that fail Luhn', 'order 4000056655665557 ref 5555-5555-5555-4445'],
  ['a declared test card', `card ${TEST_CARD} or ${groups(TEST_CARD, ' ')} or ${groups(TEST_CARD, '.')}`],
  ['masked cards and keys', '****4242 ************5556 sk_live_******** 4000 05** **** 5556'],
  ['token ids', 'tok_1 {{ 0b6e3a90-5f7e-4d7e-9d36-2c1b0c7d9a11 }} 0b6e3a905f7e4d7e9d362c1b0c7d9a11'],
  ['amounts and versions', 'amount 1999.00 EUR, v4.2.1, 10.0.0.1, 1,234,567.89'],
  ['last four digits and a CVC-like count', 'card_last4 5556, items 123, month 12'],
];

/** Headers as an answer carries them: a common-word or header-word value is not looked for there (vocabulary.ts). */
const CLEAN_HEADERS: Array<[string, string]> = [
  ['Content-Type: application/json', 'content-type: application/json; charset=utf-8\n'],
  ['a problem+json answer', 'Content-Type: application/problem+json\ncontent-length: 120\n'],
  ['the header named by a value', 'Content-Length: 42\nconnection: keep-alive\n'],
];

/** Bodies where a common-word value stands only inside longer words, or as part of a media type named in them. */
const CLEAN_WORDS: Array<[string, string]> = [
  ['a longer word', 'three applications were filed'],
  ['glued to letters', 'myapplicationform reapplication'],
  ['a header name inside a longer name', 'x-content-length-limit: 3'],
];

describe('the corpus: clean', () => {
  it.each(CLEAN_HEADERS)('headers: %s', (_name, text) => {
    expect(guard.findIn(secrets(), text, { headers: true })).toEqual([]);
  });

  it.each(CLEAN_WORDS)('words: %s', (_name, text) => {
    expect(guard.findIn(secrets(), text)).toEqual([]);
  });

  it('a value kept from an earlier call is found in a call that revealed nothing (its code version shares what it was revealed)', () => {
    const version = new CallSecrets({ values: 256, bytes: 1 << 20 });
    const earlier = secrets();
    earlier.share(version);
    const later = new CallSecrets();
    later.share(version);
    expect(later.find(`raw ${SECRET}`).map((hit) => hit.tokenId)).toEqual(['tok_key']);
    expect(guard.redact(later, `raw ${SECRET}`)).toBe('raw {{ tok_key }}');
  });

  it.each(CLEAN)('%s', (_name, text) => {
    expect(guard.findIn(secrets(), text)).toEqual([]);
    expect(guard.findIn(secrets(), JSON.stringify({ text }))).toEqual([]);
  });

  it('base64 of random bytes (2,000 texts)', () => {
    const set = secrets();
    for (let i = 0; i < 2000; i++) {
      const bytes = createHash('sha512').update(`seed ${i}`).digest();
      const text = bytes.toString('base64');
      expect([text, guard.findIn(set, text)]).toEqual([text, []]);
      expect(guard.findIn(set, bytes.toString('base64url'))).toEqual([]);
    }
  });
});
