import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateKey, hashKey, randomBase58 } from '../../../src/emulator/services/keys.js';

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;

describe('generateKey', () => {
  it.each([
    ['private', 'pvt'],
    ['public', 'pub'],
    ['management', 'mgt'],
  ] as const)('formats a %s key as key_local_%s_<22 base58>', (type, tag) => {
    const key = generateKey(type);
    expect(key).toMatch(new RegExp(`^key_local_${tag}_[1-9A-HJ-NP-Za-km-z]{22}$`));
  });

  it('puts the environment in the key', () => {
    expect(generateKey('private', 'test')).toMatch(/^key_test_pvt_[1-9A-HJ-NP-Za-km-z]{22}$/);
  });

  it('generates distinct keys of base58 characters only', () => {
    const keys = Array.from({ length: 1000 }, () => generateKey('private'));
    expect(new Set(keys).size).toBe(1000);
    const secrets = keys.map((key) => key.slice('key_local_pvt_'.length));
    for (const secret of secrets) {
      expect(secret).toHaveLength(22);
      expect(secret).toMatch(BASE58);
      expect(secret).not.toMatch(/[0OIl]/);
    }
    // 22,000 random characters should use most of the 58-letter alphabet.
    expect(new Set(secrets.join('')).size).toBeGreaterThan(50);
  });
});

describe('randomBase58', () => {
  it.each([1, 22, 100])('returns %i base58 characters', (length) => {
    const text = randomBase58(length);
    expect(text).toHaveLength(length);
    expect(text).toMatch(BASE58);
  });
});

describe('hashKey', () => {
  it('is the SHA-256 of the key in hex', () => {
    const key = generateKey('management');
    expect(hashKey(key)).toBe(createHash('sha256').update(key).digest('hex'));
    expect(hashKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('differs between keys and is stable for one key', () => {
    expect(hashKey('key_a')).not.toBe(hashKey('key_b'));
    expect(hashKey('key_a')).toBe(hashKey('key_a'));
  });
});
