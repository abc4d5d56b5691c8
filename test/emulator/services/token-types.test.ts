import { describe, expect, it } from 'vitest';
import type { TokenType } from '../../../src/api/types.js';
import { FieldErrors, HttpError } from '../../../src/emulator/errors.js';
import {
  abaChecksum,
  DEFAULT_CONTAINERS,
  defaultMask,
  luhn,
  normalizeTokenData,
} from '../../../src/emulator/services/token-types.js';

/** A fixed clock: 15 June 2026, so expiry checks do not depend on today's date. */
const NOW = new Date('2026-06-15T12:00:00Z');

const VALID_CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2030, cvc: '123' };
const VALID_BANK = { routing_number: '011000015', account_number: '000123456789' };

/** Runs the check and returns the result with the field errors it collected (as the HttpError carries them). */
function check(
  type: TokenType,
  data: unknown,
  now: Date = NOW,
): { result: unknown; count: number; errors: Record<string, string[]> } {
  const errors = new FieldErrors();
  const result = normalizeTokenData(type, data, errors, now);
  const count = errors.count;
  try {
    errors.throwIfAny();
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    const http = error as HttpError;
    expect(http.status).toBe(400);
    return { result, count, errors: http.errors ?? {} };
  }
  return { result, count, errors: {} };
}

describe('luhn', () => {
  it.each(['4242424242424242', '5555555555554444', '378282246310005', '4000056655665556', '6011111111111117'])(
    'accepts the test card %s',
    (number) => {
      expect(luhn(number)).toBe(true);
    },
  );

  it.each(['4242424242424241', '5555555555554445', '378282246310006', '4242424242424224', '1234567812345678'])(
    'rejects %s',
    (number) => {
      expect(luhn(number)).toBe(false);
    },
  );

  it('catches a single changed digit anywhere in a valid number', () => {
    const valid = '4242424242424242';
    for (let i = 0; i < valid.length; i++) {
      const changed = valid.slice(0, i) + String((Number(valid[i]) + 1) % 10) + valid.slice(i + 1);
      expect(luhn(changed), changed).toBe(false);
    }
  });
});

describe('abaChecksum', () => {
  it.each(['011000015', '021000021', '011401533', '091000019'])('accepts the routing number %s', (routing) => {
    expect(abaChecksum(routing)).toBe(true);
  });

  it.each(['011000016', '021000022', '123456789', '011000051'])('rejects %s', (routing) => {
    expect(abaChecksum(routing)).toBe(false);
  });
});

describe('DEFAULT_CONTAINERS', () => {
  it('puts each type in its own high-sensitivity container', () => {
    expect(DEFAULT_CONTAINERS).toEqual({ token: '/general/high/', card: '/pci/high/', bank: '/bank/high/' });
  });
});

describe('normalizeTokenData: token', () => {
  it.each([['a string'], [42], [null], [true], [[1, 'two', { three: 3 }]], [{ nested: { any: ['json'] } }]])(
    'accepts %j as it is',
    (data) => {
      const { result, count } = check('token', data);
      expect(count).toBe(0);
      expect(result).toBe(data);
    },
  );
});

describe('normalizeTokenData: card', () => {
  it('accepts a valid card and returns it normalised', () => {
    const { result, count } = check('card', VALID_CARD);
    expect(count).toBe(0);
    expect(result).toEqual(VALID_CARD);
  });

  it('accepts a card without a cvc and adds none', () => {
    const { number, expiration_month, expiration_year } = VALID_CARD;
    const { result, count } = check('card', { number, expiration_month, expiration_year });
    expect(count).toBe(0);
    expect(result).toEqual({ number, expiration_month, expiration_year });
    expect(result).not.toHaveProperty('cvc');
  });

  it.each(['4242 4242 4242 4242', '4242-4242-4242-4242', ' 4242 4242-4242 4242 '])(
    'strips spaces and dashes from %j',
    (number) => {
      const { result, count } = check('card', { ...VALID_CARD, number });
      expect(count).toBe(0);
      expect(result).toMatchObject({ number: '4242424242424242' });
    },
  );

  it('accepts a number given as a JSON number and returns it as a string', () => {
    const { result, count } = check('card', { ...VALID_CARD, number: 4242424242424242 });
    expect(count).toBe(0);
    expect(result).toMatchObject({ number: '4242424242424242' });
  });

  it.each([
    ['a string', 'card'],
    ['null', null],
    ['an array', [VALID_CARD]],
    ['a number', 4242424242424242],
  ])('refuses data that is %s', (_name, data) => {
    const { count, errors } = check('card', data);
    expect(count).toBe(1);
    expect(Object.keys(errors)).toEqual(['data']);
    expect(errors.data?.[0]).toMatch(/object/);
  });

  it('requires the number, month and year', () => {
    const { count, errors } = check('card', {});
    expect(count).toBe(3);
    expect(errors).toEqual({
      'data.number': ['is required'],
      'data.expiration_month': ['is required'],
      'data.expiration_year': ['is required'],
    });
  });

  it.each([
    ['too short (11 digits)', '42424242424'],
    ['too long (20 digits)', '42424242424242424242'],
    ['letters', '4242abcd42424242'],
    ['empty', ''],
    ['not a string or number', true],
    ['a fractional number', 4242424242.5],
  ])('refuses a number that is %s', (_name, number) => {
    const { count, errors } = check('card', { ...VALID_CARD, number });
    expect(count).toBe(1);
    expect(errors).toEqual({ 'data.number': ['must be 12 to 19 digits'] });
  });

  it('accepts 12 and 19 digit numbers that pass Luhn', () => {
    for (const number of ['424242424242', '4242424242424242428']) {
      expect(luhn(number), number).toBe(true);
      expect(check('card', { ...VALID_CARD, number }).count, number).toBe(0);
    }
  });

  it('refuses a number failing the Luhn check', () => {
    const { count, errors } = check('card', { ...VALID_CARD, number: '4242424242424241' });
    expect(count).toBe(1);
    expect(errors['data.number']?.[0]).toMatch(/Luhn/);
  });

  it.each([0, 13, -1, 1.5, 'twelve', '13', '1.5', ' 12', null])('refuses the month %j', (month) => {
    const { count, errors } = check('card', { ...VALID_CARD, expiration_month: month });
    expect(count).toBe(1);
    expect(errors).toEqual({ 'data.expiration_month': ['must be an integer from 1 to 12'] });
  });

  it.each([1, 12, '06', '12'])('accepts the month %j (digit strings as the platform takes them)', (month) => {
    expect(check('card', { ...VALID_CARD, expiration_month: month }).count).toBe(0);
  });

  it.each([999, 30, 10000, 2030.5, 'next year', '20 30'])('refuses the year %j', (year) => {
    const { count, errors } = check('card', { ...VALID_CARD, expiration_year: year });
    expect(count).toBe(1);
    expect(errors).toEqual({ 'data.expiration_year': ['must be a four-digit year'] });
  });

  it('refuses a card that expired before now', () => {
    // NOW is June 2026: May 2026 and any month of 2025 are past.
    for (const [month, year] of [
      [5, 2026],
      [12, 2025],
      [1, 2000],
    ] as const) {
      const { count, errors } = check('card', { ...VALID_CARD, expiration_month: month, expiration_year: year });
      expect(count, `${month}/${year}`).toBe(1);
      expect(errors).toEqual({ 'data.expiration_year': ['the card has expired'] });
    }
  });

  it('accepts a card expiring in the current month or later', () => {
    for (const [month, year] of [
      [6, 2026],
      [7, 2026],
      [1, 2027],
    ] as const) {
      expect(
        check('card', { ...VALID_CARD, expiration_month: month, expiration_year: year }).count,
        `${month}/${year}`,
      ).toBe(0);
    }
  });

  it('uses the UTC month of now', () => {
    // 1 July 00:30 UTC is still 30 June in New York; UTC decides: a June card has expired.
    const now = new Date('2026-07-01T00:30:00Z');
    expect(check('card', { ...VALID_CARD, expiration_month: 6, expiration_year: 2026 }, now).errors).toEqual({
      'data.expiration_year': ['the card has expired'],
    });
    expect(check('card', { ...VALID_CARD, expiration_month: 7, expiration_year: 2026 }, now).count).toBe(0);
  });

  it('accepts a card whose expiry has not passed on the real clock too', () => {
    const nextYear = new Date().getUTCFullYear() + 1;
    expect(check('card', { ...VALID_CARD, expiration_year: nextYear }, new Date()).count).toBe(0);
  });

  it.each(['123', '1234'])('accepts the cvc %j', (cvc) => {
    const { result, count } = check('card', { ...VALID_CARD, cvc });
    expect(count).toBe(0);
    expect(result).toMatchObject({ cvc });
  });

  it.each(['12', '12345', '', 'abc', '12a'])('refuses the cvc %j', (cvc) => {
    const { count, errors } = check('card', { ...VALID_CARD, cvc });
    expect(count).toBe(1);
    expect(errors).toEqual({ 'data.cvc': ['must be 3 or 4 digits (a string)'] });
  });

  it.each([123, 1234, null, ['123']])('refuses a cvc that is not a string: %j', (cvc) => {
    const { count, errors } = check('card', { ...VALID_CARD, cvc });
    expect(count).toBe(1);
    expect(Object.keys(errors)).toEqual(['data.cvc']);
  });

  it('refuses an unknown field and names the allowed ones', () => {
    const { count, errors } = check('card', { ...VALID_CARD, holder_name: 'Ada' });
    expect(count).toBe(1);
    expect(Object.keys(errors)).toEqual(['data.holder_name']);
    expect(errors['data.holder_name']?.[0]).toContain('number, expiration_month, expiration_year, cvc');
  });

  it('collects every problem at once', () => {
    const { count, errors } = check('card', {
      number: '4242424242424241',
      expiration_month: 13,
      expiration_year: 99,
      cvc: 12,
      extra: 1,
    });
    expect(count).toBe(5);
    expect(Object.keys(errors).sort()).toEqual([
      'data.cvc',
      'data.expiration_month',
      'data.expiration_year',
      'data.extra',
      'data.number',
    ]);
  });

  it('adds messages under the path it is given', () => {
    const errors = new FieldErrors();
    normalizeTokenData('card', { ...VALID_CARD, cvc: '1' }, errors, NOW, 'tokens[2].data');
    expect(() => errors.throwIfAny()).toThrow(HttpError);
    try {
      errors.throwIfAny();
    } catch (error) {
      expect((error as HttpError).errors).toEqual({ 'tokens[2].data.cvc': ['must be 3 or 4 digits (a string)'] });
    }
  });

  it('does not mutate the data it checks', () => {
    const data = { ...VALID_CARD, number: '4242 4242 4242 4242' };
    const { result } = check('card', data);
    expect(data.number).toBe('4242 4242 4242 4242');
    expect(result).not.toBe(data);
  });

  it('counts nothing for valid data and leaves throwIfAny silent', () => {
    const errors = new FieldErrors();
    normalizeTokenData('card', VALID_CARD, errors, NOW);
    normalizeTokenData('bank', VALID_BANK, errors, NOW);
    normalizeTokenData('token', { anything: true }, errors, NOW);
    expect(errors.count).toBe(0);
    expect(() => errors.throwIfAny()).not.toThrow();
  });
});

describe('normalizeTokenData: bank', () => {
  it('accepts a valid account and keeps leading zeros', () => {
    const { result, count } = check('bank', VALID_BANK);
    expect(count).toBe(0);
    expect(result).toEqual(VALID_BANK);
  });

  it('strips spaces and dashes, and accepts numbers', () => {
    const { result, count } = check('bank', { routing_number: '0110-00015', account_number: 1234567 });
    expect(count).toBe(0);
    expect(result).toEqual({ routing_number: '011000015', account_number: '1234567' });
  });

  it('requires both numbers', () => {
    const { count, errors } = check('bank', {});
    expect(count).toBe(2);
    expect(errors).toEqual({ 'data.routing_number': ['is required'], 'data.account_number': ['is required'] });
  });

  it.each(['01100001', '0110000155', 'abcdefghi', ''])(
    'refuses the routing number %j (not 9 digits)',
    (routing_number) => {
      const { count, errors } = check('bank', { ...VALID_BANK, routing_number });
      expect(count).toBe(1);
      expect(errors).toEqual({ 'data.routing_number': ['must be 9 digits'] });
    },
  );

  it('refuses a routing number failing the ABA checksum', () => {
    const { count, errors } = check('bank', { ...VALID_BANK, routing_number: '011000016' });
    expect(count).toBe(1);
    expect(errors['data.routing_number']?.[0]).toMatch(/checksum/);
  });

  it.each(['1234', '12345678901234567'])('accepts the account number %j (4 to 17 digits)', (account_number) => {
    const { result, count } = check('bank', { ...VALID_BANK, account_number });
    expect(count).toBe(0);
    expect(result).toMatchObject({ account_number });
  });

  it.each(['123', '123456789012345678', '12ab', ''])('refuses the account number %j', (account_number) => {
    const { count, errors } = check('bank', { ...VALID_BANK, account_number });
    expect(count).toBe(1);
    expect(errors).toEqual({ 'data.account_number': ['must be 4 to 17 digits'] });
  });

  it('refuses unknown fields and non-object data', () => {
    const unknown = check('bank', { ...VALID_BANK, bank_name: 'X' });
    expect(unknown.count).toBe(1);
    expect(Object.keys(unknown.errors)).toEqual(['data.bank_name']);
    expect(unknown.errors['data.bank_name']?.[0]).toContain('routing_number, account_number');

    const notObject = check('bank', '011000015');
    expect(notObject.count).toBe(1);
    expect(Object.keys(notObject.errors)).toEqual(['data']);
  });
});

describe('defaultMask', () => {
  it('shows the last four digits of a card number and keeps the expiry, not the cvc', () => {
    expect(defaultMask('card', VALID_CARD)).toEqual({
      number: 'XXXXXXXXXXXX4242',
      expiration_month: 12,
      expiration_year: 2030,
    });
  });

  it('masks a 15-digit card number to its length', () => {
    const mask = defaultMask('card', { number: '378282246310005', expiration_month: 1, expiration_year: 2031 }) as {
      number: string;
    };
    expect(mask.number).toBe('XXXXXXXXXXX0005');
    expect(mask.number).toHaveLength(15);
  });

  it('shows the last four digits of an account number', () => {
    expect(defaultMask('bank', VALID_BANK)).toEqual({ routing_number: '011000015', account_number: 'XXXXXXXX6789' });
  });

  it('masks the data as normalizeTokenData returns it', () => {
    const { result } = check('card', { ...VALID_CARD, number: '5555 5555 5555 4444' });
    expect(defaultMask('card', result)).toMatchObject({ number: 'XXXXXXXXXXXX4444' });
  });

  it('is undefined for a token', () => {
    expect(defaultMask('token', { number: '4242424242424242' })).toBeUndefined();
    expect(defaultMask('token', 'secret')).toBeUndefined();
  });
});
