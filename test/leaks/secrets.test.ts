import { describe, expect, it } from 'vitest';
import { CallSecrets, type LeakForm, luhn, maskCards, scanCards } from '../../src/emulator/leaks/secrets.js';

const CARD = '4111111111111111';
const NAME = 'Jane Q. Doe';
const SSN = '078-05-1120';

function secrets(): CallSecrets {
  const set = new CallSecrets();
  set.add({ number: CARD, cvc: '123', exp_month: 12, holder: NAME }, 'tok_card');
  set.add(SSN, 'tok_ssn');
  set.add('p@ss/word+"quoted"\n', 'tok_pw');
  set.add('>?>?>?>?>?', 'tok_sym');
  return set;
}

const b64 = (text: string) => Buffer.from(text).toString('base64');
const b64url = (text: string) => Buffer.from(text).toString('base64url');

/** Each form: a text holding it, and what find must say. */
const FOUND: Array<[string, string, string, LeakForm]> = [
  ['plain', `card ${CARD} ok`, 'tok_card', 'plain'],
  ['plain, in JSON', JSON.stringify({ n: CARD }), 'tok_card', 'plain'],
  ['base64', b64(CARD), 'tok_card', 'base64'],
  ['base64 inside, offset 0', b64(`abc${CARD}xyz`), 'tok_card', 'base64'],
  ['base64 inside, offset 1', b64(`abcd${CARD}xyz`), 'tok_card', 'base64'],
  ['base64 inside, offset 2', b64(`abcde${CARD}x`), 'tok_card', 'base64'],
  ['base64 of JSON', b64(JSON.stringify({ holder: NAME, n: 1 })), 'tok_card', 'base64'],
  ['base64url', b64url('x>?>?>?>?>?y'), 'tok_sym', 'base64url'],
  ['base64 with + and /', b64('x>?>?>?>?>?y'), 'tok_sym', 'base64'],
  ['hex lower', Buffer.from(CARD).toString('hex'), 'tok_card', 'hex'],
  ['hex upper', Buffer.from(NAME).toString('hex').toUpperCase(), 'tok_card', 'hex'],
  ['percent', `q=${encodeURIComponent(NAME)}`, 'tok_card', 'percent'],
  ['percent, form', `q=${new URLSearchParams({ a: NAME }).toString().slice(2)}`, 'tok_card', 'percent'],
  ['percent, lower-case escapes', 'x=p%40ss%2fword%2b%22quoted%22%0a', 'tok_pw', 'percent'],
  ['json escaping', JSON.stringify({ pw: 'p@ss/word+"quoted"\n' }), 'tok_pw', 'json'],
  ['json escaping twice', JSON.stringify(JSON.stringify({ pw: 'p@ss/word+"quoted"\n' })), 'tok_pw', 'json'],
  ['card spaced 4-4-4-4', '4111 1111 1111 1111', 'tok_card', 'card-spaced'],
  ['card spaced any grouping', 'n: 41 111111 1111 111 1.', 'tok_card', 'card-spaced'],
  ['card dashed', '4111-1111-1111-1111', 'tok_card', 'card-dashed'],
  ['other case', `name=${NAME.toUpperCase()}`, 'tok_card', 'case'],
  ['other case, lower', NAME.toLowerCase(), 'tok_card', 'case'],
  ['a number leaf', 'ssn 078-05-1120', 'tok_ssn', 'plain'],
];

describe('CallSecrets.find', () => {
  it.each(FOUND)('finds %s', (_name, text, tokenId, form) => {
    const hits = secrets().find(text);
    expect(hits.map((hit) => ({ tokenId: hit.tokenId, form: hit.form }))).toContainEqual({ tokenId, form });
  });

  it('names where each value stands', () => {
    const text = `a ${CARD} b`;
    const [hit] = secrets().find(text);
    expect(text.slice(hit!.start, hit!.end)).toBe(CARD);
  });

  it('finds numbers as JSON writes them', () => {
    const set = new CallSecrets();
    set.add({ account: 123456789 }, 'tok_n');
    expect(set.find('{"a":123456789}')).toMatchObject([{ tokenId: 'tok_n', form: 'plain' }]);
  });

  it.each([
    ['values under 6 characters', 'cvc 123, month 12'],
    ['a masked value', '{"number":"XXXXXXXXXXXX1111","holder":"J*** D**"}'],
    ['token ids and expressions', '{"card":"{{ tok_card }}","id":"tok_card"}'],
    ['a UUID', '4f1c2a3b-1111-4111-8111-111111111111'],
    ['timestamps', '2026-11-27T10:00:00.000Z 1764237600000'],
    ['ordinary JSON', '{"status":"ok","amount":1999,"currency":"usd","items":[1,2,3]}'],
    ['part of the card only', '411111111111'],
  ])('does not flag %s', (_name, text) => {
    expect(secrets().find(text)).toEqual([]);
  });

  it('an empty set finds nothing and costs nothing', () => {
    expect(new CallSecrets().find(`x ${CARD}`)).toEqual([]);
    expect(new CallSecrets().size).toBe(0);
  });

  it('counts the values looked for (too short ones left out)', () => {
    expect(secrets().size).toBe(5);
  });
});

describe('CallSecrets.redact', () => {
  it('replaces every form with the token expression', () => {
    const text = `a ${CARD} b ${b64(`x${CARD}`)} c 4111 1111 1111 1111 d ${NAME.toUpperCase()}`;
    const redacted = secrets().redact(text);
    expect(redacted).toMatch(
      /^a \{\{ tok_card \}\} b \S*\{\{ tok_card \}\}\S* c \{\{ tok_card \}\} d \{\{ tok_card \}\}$/,
    );
    expect(redacted).not.toContain(CARD);
    expect(secrets().find(redacted)).toEqual([]);
  });

  it('leaves a text without values as it is', () => {
    const text = '{"ok":true}';
    expect(secrets().redact(text)).toBe(text);
  });

  it('a longer value wins over one inside it', () => {
    const set = new CallSecrets();
    set.add('secret-value', 'tok_short');
    set.add('my-secret-value-long', 'tok_long');
    expect(set.redact('x my-secret-value-long y')).toBe('x {{ tok_long }} y');
  });
});

describe('CallSecrets.merge', () => {
  it('looks for the values of both', () => {
    const run = new CallSecrets();
    run.add('first-secret', 'tok_a');
    const other = new CallSecrets();
    other.add('4242424242424242', 'tok_b');
    run.merge(other);
    expect(run.size).toBe(2);
    expect(run.find('first-secret 4242 4242 4242 4242').map((hit) => hit.tokenId)).toEqual(['tok_a', 'tok_b']);
  });
});

describe('scanCards', () => {
  it.each([
    ['plain', '4242424242424242', '4242'],
    ['spaced', 'card 4242 4242 4242 4242 exp', '4242'],
    ['dashed', 'card=5555-5555-5555-4444;', '4444'],
    ['amex grouping', '3782 822463 10005', '0005'],
    ['in JSON', '{"n":"6011111111111117"}', '1117'],
  ])('finds a card number, %s', (_name, text, last4) => {
    expect(scanCards(text)).toMatchObject([{ last4 }]);
  });

  it.each([
    ['Luhn-invalid', '4242424242424241'],
    ['too short', '424242424242'],
    ['part of a longer digit run', '42424242424242420000'],
    ['epoch milliseconds', '1764237600000 1764237600001'],
    ['a UUID of digits', '42345678-1234-4234-a234-123456789012'],
    ['UUID groups', 'f81d4fae-7dec-11d0-a765-00a0c91e6bf6 550e8400-e29b-41d4-a716-446655440000'],
    ['a date and a phone number', '2026-11-27 +1 415-555-0100'],
    ['glued to letters', 'order4242424242424242x'],
  ])('leaves alone %s', (_name, text) => {
    expect(scanCards(text)).toEqual([]);
  });

  it('leaves alone the allowed test cards', () => {
    expect(scanCards('4242 4242 4242 4242', new Set(['4242424242424242']))).toEqual([]);
  });

  it('masks what it finds', () => {
    expect(maskCards('a 4242-4242-4242-4242 b 5555555555554444')).toBe('a [card ****4242] b [card ****4444]');
  });

  it('luhn', () => {
    expect(luhn('79927398713')).toBe(true);
    expect(luhn('79927398710')).toBe(false);
  });
});
