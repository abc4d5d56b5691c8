import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LeakGuard } from '../../src/emulator/leaks/guard.js';
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
  return set;
}

const guard = new LeakGuard('fail', [TEST_CARD], () => {});
const groups = (digits: string, by: string) => (digits.match(/.{4}/g) ?? []).join(by);
const b64 = (text: string) => Buffer.from(text).toString('base64');

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

describe('the corpus: clean', () => {
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
