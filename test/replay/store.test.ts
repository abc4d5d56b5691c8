import { describe, expect, it } from 'vitest';
import { CallStore } from '../../src/emulator/replay/store.js';
import type { KeptCall } from '../../src/emulator/replay/types.js';

const call = (tenantId: string, traceId: string, size = 10): KeptCall => ({
  kind: 'reactor',
  traceId,
  tenantId,
  id: 'r',
  name: 'r',
  time: '2026-11-28T00:00:00.000Z',
  applicationId: 'a',
  args: { pad: 'x'.repeat(size) },
  stages: [],
  exchanges: [],
});

describe('the kept calls of svc replay', () => {
  it('keeps the last N per tenant, the oldest dropped first', () => {
    const store = new CallStore({ perTenant: 3, tenants: 10, weight: 1e9, tenantWeight: 1e9 });
    for (let i = 0; i < 5; i++) store.add(call('t', `c${i}`));
    expect(store.count('t')).toBe(3);
    expect(store.get('t', 'c1')).toBeUndefined();
    expect(store.get('t', 'c4')?.traceId).toBe('c4');
    expect(store.get('other', 'c4')).toBeUndefined();
  });

  it('is bounded by weight per tenant and in all, the newest always kept', () => {
    const store = new CallStore({ perTenant: 100, tenants: 10, weight: 5_000, tenantWeight: 2_500 });
    for (let i = 0; i < 50; i++) store.add(call(`t${i % 5}`, `c${i}`, 400));
    expect(store.weight).toBeLessThanOrEqual(5_000);
    for (let t = 0; t < 5; t++) expect(store.count(`t${t}`)).toBeLessThanOrEqual(5);
    expect(store.get('t4', 'c49')).toBeDefined();
    store.add(call('big', 'huge', 100_000));
    expect(store.get('big', 'huge')).toBeDefined();
    store.forget('big');
    expect(store.get('big', 'huge')).toBeUndefined();
    expect(store.weight).toBeGreaterThanOrEqual(0);
  });

  it('holds at most the bound of tenants, the one heard of least recently dropped', () => {
    const store = new CallStore({ perTenant: 10, tenants: 2, weight: 1e9, tenantWeight: 1e9 });
    store.add(call('a', '1'));
    store.add(call('b', '1'));
    store.add(call('a', '2'));
    store.add(call('c', '1'));
    expect(store.count('b')).toBe(0);
    expect(store.count('a')).toBe(2);
  });
});
