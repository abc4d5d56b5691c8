/**
 * A tenant whose last record of a collection is deleted leaves nothing of it in the collection
 * (svc/testing makes and deletes a tenant per test: 5 empty Maps a tenant, +23 MB over 20,000).
 */
import { describe, expect, it } from 'vitest';
import { Collection, type TenantRecord } from '../../../src/emulator/store/collection.js';

describe('a collection after a tenant goes', () => {
  it('keeps no empty map for a tenant whose records were all deleted', () => {
    const collection = new Collection<TenantRecord>('things', () => Promise.reject(new Error('not written here')));
    const tenants = (collection as unknown as { byTenant: Map<string, unknown> }).byTenant;
    const record = (tenant: string, id: string) => ({ id, tenant_id: tenant, created_at: '2026-01-01T00:00:00.000Z' });
    collection.apply(
      new Map([
        ['a/1', { tenantId: 'a', id: '1', record: record('a', '1') }],
        ['a/2', { tenantId: 'a', id: '2', record: record('a', '2') }],
        ['b/1', { tenantId: 'b', id: '1', record: record('b', '1') }],
      ]),
    );
    collection.apply(new Map([['a/1', { tenantId: 'a', id: '1', record: null }]]));
    expect(collection.count('a')).toBe(1);
    collection.apply(new Map([['a/2', { tenantId: 'a', id: '2', record: null }]]));
    expect(collection.count('a')).toBe(0);
    expect([...tenants.keys()]).toEqual(['b']);
    expect(collection.get('b', '1')).toEqual(record('b', '1'));
  });
});
