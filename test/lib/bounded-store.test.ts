import { describe, expect, it } from 'vitest';
import { BoundedStore } from '../../src/lib/bounded-store.js';

describe('BoundedStore', () => {
  it('keeps the newest values of an owner by count, and a key set again once', () => {
    const store = new BoundedStore<string>({ perOwner: 2, owners: 10, weight: 1e9, ownerWeight: 1e9 });
    store.set('a', 'k1', 'one', 1);
    store.set('a', 'k2', 'two', 1);
    store.set('a', 'k2', 'two again', 1);
    expect(store.count('a')).toBe(2);
    store.set('a', 'k3', 'three', 1);
    expect(store.get('a', 'k1')).toBeUndefined();
    expect(store.get('a', 'k2')).toBe('two again');
    expect(store.weight).toBe(2);
  });

  it('keeps the newest value whatever it weighs, and drops the owner heard of least recently first', () => {
    const store = new BoundedStore<number>({ perOwner: 10, owners: 2, weight: 100, ownerWeight: 50 });
    store.set('a', 'x', 1, 40);
    store.set('b', 'y', 2, 40);
    store.set('a', 'z', 3, 500);
    expect(store.get('a', 'z')).toBe(3);
    expect(store.get('a', 'x')).toBeUndefined();
    expect(store.count('b')).toBe(0);
    store.set('c', 'w', 4, 1);
    store.set('d', 'v', 5, 1);
    expect(store.count('a')).toBe(0);
    store.forget('d');
    expect(store.weight).toBe(1);
  });
});
