/**
 * What each token type accepts and how it is masked by default (pure). `token` holds any JSON;
 * `card` a payment card (Luhn-checked number, a valid expiry that has not passed, optional CVC);
 * `bank` a US bank account (ABA-checked routing number and an account number).
 */
import type { BankData, CardData, TokenType } from '../../api/types.js';
import type { FieldErrors } from '../errors.js';

export const DEFAULT_CONTAINERS: Record<TokenType, string> = {
  token: '/general/high/',
  card: '/pci/high/',
  bank: '/bank/high/',
};

/** Checks `data` for `type`, adding messages under `data.*`; returns it normalised (digits only). */
export function normalizeTokenData(
  type: TokenType,
  data: unknown,
  errors: FieldErrors,
  now: Date,
  at = 'data',
): unknown {
  if (type === 'token') return data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    errors.add(at, `must be an object for a ${type} token`);
    return data;
  }
  const fields = data as Record<string, unknown>;
  const allowed =
    type === 'card' ? ['number', 'expiration_month', 'expiration_year', 'cvc'] : ['routing_number', 'account_number'];
  for (const field of Object.keys(fields)) {
    if (!allowed.includes(field))
      errors.add(`${at}.${field}`, `is not a field of a ${type} (fields: ${allowed.join(', ')})`);
  }
  return type === 'card' ? normalizeCard(fields, errors, now, at) : normalizeBank(fields, errors, at);
}

function digits(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  if (typeof value !== 'string') return undefined;
  const stripped = value.replace(/[\s-]/g, '');
  return /^\d+$/.test(stripped) ? stripped : undefined;
}

/**
 * A month or a year as the platform takes it: a number, or a string of digits (`"06"`, `"2030"`,
 * as the vendor's own examples send them) taken as that number; anything else as it was given.
 */
function wholeNumber(value: unknown): unknown {
  return typeof value === 'string' && /^\d{1,4}$/.test(value) ? Number(value) : value;
}

function normalizeCard(fields: Record<string, unknown>, errors: FieldErrors, now: Date, at: string): CardData {
  const number = digits(fields.number);
  if (fields.number === undefined) errors.add(`${at}.number`, 'is required');
  else if (number === undefined || number.length < 12 || number.length > 19)
    errors.add(`${at}.number`, 'must be 12 to 19 digits');
  else if (!luhn(number)) errors.add(`${at}.number`, 'is not a valid card number (Luhn check failed)');

  const month = wholeNumber(fields.expiration_month);
  const year = wholeNumber(fields.expiration_year);
  if (month === undefined) errors.add(`${at}.expiration_month`, 'is required');
  else if (!Number.isInteger(month) || (month as number) < 1 || (month as number) > 12)
    errors.add(`${at}.expiration_month`, 'must be an integer from 1 to 12');
  if (year === undefined) errors.add(`${at}.expiration_year`, 'is required');
  else if (!Number.isInteger(year) || (year as number) < 1000 || (year as number) > 9999)
    errors.add(`${at}.expiration_year`, 'must be a four-digit year');
  else if (
    Number.isInteger(month) &&
    (year as number) * 12 + (month as number) < now.getUTCFullYear() * 12 + now.getUTCMonth() + 1
  ) {
    errors.add(`${at}.expiration_year`, 'the card has expired');
  }

  const cvc = fields.cvc;
  if (cvc !== undefined && (typeof cvc !== 'string' || !/^\d{3,4}$/.test(cvc)))
    errors.add(`${at}.cvc`, 'must be 3 or 4 digits (a string)');
  return {
    number: number ?? String(fields.number),
    expiration_month: month as number,
    expiration_year: year as number,
    ...(cvc !== undefined && { cvc: cvc as string }),
  };
}

function normalizeBank(fields: Record<string, unknown>, errors: FieldErrors, at: string): BankData {
  const routing = digits(fields.routing_number);
  if (fields.routing_number === undefined) errors.add(`${at}.routing_number`, 'is required');
  else if (routing === undefined || routing.length !== 9) errors.add(`${at}.routing_number`, 'must be 9 digits');
  else if (!abaChecksum(routing))
    errors.add(`${at}.routing_number`, 'is not a valid ABA routing number (checksum failed)');
  const account = digits(fields.account_number);
  if (fields.account_number === undefined) errors.add(`${at}.account_number`, 'is required');
  else if (account === undefined || account.length < 4 || account.length > 17)
    errors.add(`${at}.account_number`, 'must be 4 to 17 digits');
  return {
    routing_number: routing ?? String(fields.routing_number),
    account_number: account ?? String(fields.account_number),
  };
}

/** The mask a token gets when none is given: cards and accounts show their last four digits. */
export function defaultMask(type: TokenType, data: unknown): unknown {
  if (type === 'card') {
    const card = data as CardData;
    return {
      number: lastFour(card.number),
      expiration_month: card.expiration_month,
      expiration_year: card.expiration_year,
    };
  }
  if (type === 'bank') {
    const bank = data as BankData;
    return { routing_number: bank.routing_number, account_number: lastFour(bank.account_number) };
  }
  return undefined;
}

function lastFour(value: string): string {
  return 'X'.repeat(Math.max(value.length - 4, 0)) + value.slice(-4);
}

export function luhn(number: string): boolean {
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let digit = Number(number[number.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

export function abaChecksum(routing: string): boolean {
  const d = [...routing].map(Number);
  const sum = 3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + (d[2]! + d[5]! + d[8]!);
  return sum % 10 === 0;
}
