import { describe, expect, test } from 'vitest';
import { SealError, StateSeal } from '../../src/cli/commands/state/seal.js';

describe('StateSeal', () => {
  test('a header opens with its passphrase, and not with another', () => {
    const seal = StateSeal.create('right');
    expect(StateSeal.open('right', seal.header).open(seal.seal({ a: 1 }, 'x'), 'x')).toEqual({ a: 1 });
    expect(() => StateSeal.open('wrong', seal.header)).toThrow(SealError);
  });

  test('a header whose scrypt cost is out of bounds is refused as a SealError before any work', () => {
    const { header } = StateSeal.create('right');
    for (const cost of [
      { n: 3, r: 8, p: 1 },
      { n: 1 << 15, r: 8, p: 1_000_000 },
      { n: 1 << 20, r: 1 << 20, p: 1 },
      { n: 1 << 30, r: 1, p: 1 },
    ])
      expect(() => StateSeal.open('right', { ...header, ...cost })).toThrow(SealError);
  });
});
