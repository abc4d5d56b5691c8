import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Cipher, type Sealed } from '../../../src/emulator/crypto/cipher.js';
import { EmulatorError } from '../../../src/emulator/errors.js';

const CONTEXT = 'tenant-1/token-1';

/** Flips one bit of a base64 field. */
function flip(base64: string, index = 0): string {
  const bytes = Buffer.from(base64, 'base64');
  bytes[index] = bytes[index]! ^ 0x01;
  return bytes.toString('base64');
}

describe('Cipher', () => {
  it.each([
    ['a string', 'my secret value'],
    ['an object', { number: '4242424242424242', expiration_month: 12, nested: { list: [1, 'two', null] } }],
    ['a number', 42.5],
    ['zero', 0],
    ['a boolean', false],
    ['null', null],
    ['an array', ['a', 1, { b: true }]],
    ['unicode', 'snowman ☃ and emoji 🔐'],
    ['an empty string', ''],
  ])('round-trips %s', (_name, value) => {
    const cipher = new Cipher(randomBytes(32));
    const sealed = cipher.seal(value, CONTEXT);
    expect(cipher.open(sealed, CONTEXT)).toEqual(value);
  });

  it('seals into base64 iv, tag and ciphertext only', () => {
    const sealed = new Cipher(randomBytes(32)).seal({ a: 1 }, CONTEXT);
    expect(Object.keys(sealed).sort()).toEqual(['ct', 'iv', 'tag']);
    expect(Buffer.from(sealed.iv, 'base64')).toHaveLength(12);
    expect(Buffer.from(sealed.tag, 'base64')).toHaveLength(16);
    for (const field of Object.values(sealed)) expect(field).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
  });

  it('leaves no plaintext in the sealed form', () => {
    const secret = 'SuperSecretCardholder4242424242424242';
    const sealed = new Cipher(randomBytes(32)).seal({ holder: secret }, CONTEXT);
    const json = JSON.stringify(sealed);
    expect(json).not.toContain(secret);
    expect(json).not.toContain('4242424242424242');
    expect(json).not.toContain('holder');
    // Not merely base64 of the plaintext either.
    expect(Buffer.from(sealed.ct, 'base64').toString('utf8')).not.toContain(secret);
    expect(json).not.toContain(Buffer.from(secret).toString('base64').slice(0, 16));
  });

  it('gives two different seals for the same value (a fresh IV each time)', () => {
    const cipher = new Cipher(randomBytes(32));
    const first = cipher.seal('same', CONTEXT);
    const second = cipher.seal('same', CONTEXT);
    expect(first.iv).not.toBe(second.iv);
    expect(first.ct).not.toBe(second.ct);
    expect(cipher.open(first, CONTEXT)).toBe('same');
    expect(cipher.open(second, CONTEXT)).toBe('same');
  });

  it('never repeats an IV, across refills of its pool of random bytes', () => {
    const cipher = new Cipher(randomBytes(32));
    const seals = Array.from({ length: 1000 }, (_, i) => cipher.seal(i, CONTEXT));
    expect(new Set(seals.map((sealed) => sealed.iv)).size).toBe(1000);
    expect(seals.map((sealed) => cipher.open(sealed, CONTEXT))).toEqual(Array.from({ length: 1000 }, (_, i) => i));
  });

  it('gives a fresh value on every open: changing one does not change the next', () => {
    const cipher = new Cipher(randomBytes(32));
    const sealed = cipher.seal({ list: [1] }, CONTEXT);
    const first = cipher.open<{ list: number[] }>(sealed, CONTEXT);
    first.list.push(2);
    expect(cipher.open(sealed, CONTEXT)).toEqual({ list: [1] });
  });

  it('refuses to open with another context', () => {
    const cipher = new Cipher(randomBytes(32));
    const sealed = cipher.seal('bound', 'tenant-1/token-1');
    expect(() => cipher.open(sealed, 'tenant-1/token-2')).toThrow();
    expect(() => cipher.open(sealed, 'tenant-2/token-1')).toThrow();
    expect(() => cipher.open(sealed, '')).toThrow();
    expect(cipher.open(sealed, 'tenant-1/token-1')).toBe('bound');
  });

  it('refuses to open with another key', () => {
    const sealed = new Cipher(randomBytes(32)).seal('secret', CONTEXT);
    expect(() => new Cipher(randomBytes(32)).open(sealed, CONTEXT)).toThrow();
  });

  it('opens with another Cipher built on the same key', () => {
    const key = randomBytes(32);
    const sealed = new Cipher(key).seal({ v: 1 }, CONTEXT);
    expect(new Cipher(Buffer.from(key)).open(sealed, CONTEXT)).toEqual({ v: 1 });
  });

  it('refuses a tampered ciphertext, tag or iv', () => {
    const cipher = new Cipher(randomBytes(32));
    const sealed = cipher.seal({ amount: 100 }, CONTEXT);
    const tampered: Sealed[] = [
      { ...sealed, ct: flip(sealed.ct) },
      { ...sealed, ct: flip(sealed.ct, Buffer.from(sealed.ct, 'base64').length - 1) },
      { ...sealed, tag: flip(sealed.tag) },
      { ...sealed, tag: flip(sealed.tag, 15) },
      { ...sealed, iv: flip(sealed.iv) },
    ];
    for (const candidate of tampered) expect(() => cipher.open(candidate, CONTEXT)).toThrow();
    expect(cipher.open(sealed, CONTEXT)).toEqual({ amount: 100 });
  });

  it('refuses a ciphertext swapped from another record', () => {
    const cipher = new Cipher(randomBytes(32));
    const a = cipher.seal('A', CONTEXT);
    const b = cipher.seal('B', CONTEXT);
    expect(() => cipher.open({ ...a, ct: b.ct }, CONTEXT)).toThrow();
  });

  it.each([0, 16, 24, 31, 33, 64])('refuses a key of %i bytes', (length) => {
    expect(() => new Cipher(randomBytes(length))).toThrow(EmulatorError);
    expect(() => new Cipher(randomBytes(length))).toThrow(/32 bytes/);
  });
});
