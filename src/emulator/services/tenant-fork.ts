import { randomUUID } from 'node:crypto';
import type { ForkedTenant } from '../../api/types.js';
import type { Cipher } from '../crypto/cipher.js';
import { HttpError } from '../errors.js';
import type { WriteBatch } from '../store/batch.js';
import type { Collection, TenantRecord } from '../store/collection.js';
import type { ApplicationRecord, ProxyRecord, ReactorRecord, StoredTenant } from '../store/records.js';
import type { Store } from '../store/store.js';
import { openConfiguration, sealConfiguration } from './configuration.js';
import { generateKey, hashKey, randomBase58 } from './keys.js';
import { keyContext } from './proxies.js';

export type { ForkedTenant };

/**
 * Writes into `batch` a copy of `template`'s Applications, reactors and proxies under a new tenant:
 * new ids, new keys (random, stored as SHA-256), configuration sealed again for its new owner, and
 * references between them (a bound Application, `created_by`) pointed at the copies. Nothing of the
 * template's tokens, transactions, results or webhook secret is copied. The fork's code runs in the
 * template's sandbox processes (`sandbox_group`), each version in a Compartment of its own.
 */
export function writeFork(
  store: Store,
  cipher: Cipher,
  batch: WriteBatch,
  template: StoredTenant,
  name: string,
  now: string,
): ForkedTenant {
  const id = randomUUID();
  const ids = new Map<string, string>();
  const mapped = (old: string | null | undefined) => (old == null ? old : (ids.get(old) ?? old));
  const applications: ForkedTenant['applications'] = [];
  const templateApps = store.applications.list(template.id);
  for (const app of templateApps) ids.set(app.id, randomUUID());
  for (const app of templateApps) {
    const key = generateKey(app.type);
    const copy: ApplicationRecord = {
      ...app,
      id: ids.get(app.id)!,
      tenant_id: id,
      key_hash: hashKey(key),
      ...(app.created_by != null && { created_by: mapped(app.created_by)! }),
      ...(app.modified_by != null && { modified_by: mapped(app.modified_by)! }),
    };
    batch.put(store.applications, copy);
    applications.push({ id: copy.id, name: copy.name, type: copy.type, key });
  }
  const reactors = store.reactors.list(template.id).map((reactor) => {
    const copy: ReactorRecord = { ...reactor, ...owned(reactor, id, mapped) };
    copy.configuration_sealed = sealConfiguration(
      cipher,
      'reactor',
      copy,
      openConfiguration<Record<string, string>>(cipher, 'reactor', reactor),
    );
    batch.put(store.reactors, copy);
    return { id: copy.id, name: copy.name };
  });
  const proxies = store.proxies.list(template.id).map((proxy) => {
    const key = `proxy_local_${randomBase58(26)}`;
    const copy: ProxyRecord = { ...proxy, ...owned(proxy, id, mapped), key_hash: hashKey(key) };
    copy.key_sealed = cipher.seal(key, keyContext(id, copy.id));
    copy.configuration_sealed = sealConfiguration(cipher, 'proxy', copy, openConfiguration(cipher, 'proxy', proxy));
    batch.put(store.proxies, copy);
    return { id: copy.id, name: copy.name, key };
  });
  const bootstrap = {
    ...(template.bootstrap?.management && { management: ids.get(template.bootstrap.management) }),
    ...(template.bootstrap?.private && { private: ids.get(template.bootstrap.private) }),
  };
  const row: StoredTenant = {
    id,
    tenant_id: id,
    name,
    created_at: now,
    bootstrap,
    sandbox_group: template.sandbox_group ?? template.id,
  };
  batch.put(store.tenants, row);
  const keyOf = (appId: string | undefined) => applications.find((app) => app.id === appId)?.key ?? '';
  return {
    id,
    name,
    created_at: now,
    management_key: keyOf(bootstrap.management),
    private_key: keyOf(bootstrap.private),
    applications,
    reactors,
    proxies,
  };
}

/** The fields a copied reactor or proxy changes: its id, tenant and the Applications it names. */
function owned(
  record: ReactorRecord | ProxyRecord,
  tenantId: string,
  mapped: (old: string | null | undefined) => string | null | undefined,
) {
  return {
    id: randomUUID(),
    tenant_id: tenantId,
    application_id: mapped(record.application_id) ?? null,
    ...(record.created_by !== undefined && { created_by: mapped(record.created_by)! }),
    ...(record.modified_by !== undefined && { modified_by: mapped(record.modified_by)! }),
  };
}

/** Deletes in `batch` every record of `tenantId`, its row included; returns what code it had. */
export function deleteTenantRows(
  store: Store,
  batch: WriteBatch,
  tenantId: string,
): { reactors: ReactorRecord[]; proxies: ProxyRecord[] } {
  const reactors = store.reactors.list(tenantId);
  const proxies = store.proxies.list(tenantId);
  deleteAll(batch, store.applications, tenantId);
  deleteAll(batch, store.tokens, tenantId);
  deleteAll(batch, store.transactions, tenantId);
  deleteAll(batch, store.reactors, tenantId);
  deleteAll(batch, store.proxies, tenantId);
  deleteAll(batch, store.results, tenantId);
  batch.delete(store.tenants, tenantId, tenantId);
  return { reactors, proxies };
}

/**
 * Refuses (404) in `batch` a write of records of a tenant whose row is gone: a write that waited
 * for its turn (a sliced state import or tokenize yields for seconds) while its tenant was deleted
 * would otherwise leave records, and keys that still authenticate, of a tenant that is no more.
 */
export function requireTenantRow(store: Store, batch: WriteBatch, tenantId: string): void {
  if (!batch.get(store.tenants, tenantId, tenantId))
    throw new HttpError(404, 'This tenant was deleted while the request ran: nothing of it was written.');
}

function deleteAll<T extends TenantRecord>(batch: WriteBatch, collection: Collection<T>, tenantId: string): void {
  for (const record of collection.list(tenantId)) batch.delete(collection, tenantId, record.id);
}
