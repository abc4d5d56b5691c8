/**
 * A tenant's records as the entries of a state document (api/state.ts) and back: what is sealed in
 * the store is opened for the document and sealed again, under the importing tenant, for the store.
 */
import type {
  StateApplication,
  StateDocument,
  StateKind,
  StateProxy,
  StateReactor,
  StateToken,
} from '../../api/state.js';
import type { Cipher } from '../crypto/cipher.js';
import type { ApplicationRecord, ProxyRecord, ReactorRecord, TokenRecord } from '../store/records.js';
import type { Store } from '../store/store.js';
import { openConfiguration, sealConfiguration } from './configuration.js';
import { hashKey } from './keys.js';
import { keyContext } from './proxies.js';
import { type Secret, sealContext } from './token-creation.js';
import { canonicalJson } from '../../lib/canonical-json.js';

export function applicationEntry(record: ApplicationRecord): StateApplication {
  return {
    id: record.id,
    name: record.name,
    type: record.type,
    permissions: record.permissions,
    rules: record.rules,
    expires_at: record.expires_at ?? null,
    key_hash: record.key_hash,
    created_at: record.created_at,
  };
}

export function reactorEntry(cipher: Cipher, record: ReactorRecord): StateReactor {
  return {
    id: record.id,
    name: record.name,
    code: record.code,
    application_id: record.application_id,
    configuration: openConfiguration(cipher, 'reactor', record),
    created_at: record.created_at,
  };
}

export function proxyEntry(cipher: Cipher, record: ProxyRecord): StateProxy {
  return {
    id: record.id,
    name: record.name,
    destination_url: record.destination_url,
    request_transform: record.request_transform,
    response_transform: record.response_transform,
    application_id: record.application_id,
    require_auth: record.require_auth,
    key: cipher.open<string>(record.key_sealed, keyContext(record.tenant_id, record.id)),
    configuration: openConfiguration(cipher, 'proxy', record),
    created_at: record.created_at,
  };
}

export function tokenEntry(cipher: Cipher, record: TokenRecord): StateToken {
  const secret = cipher.open<Secret>(record.secret, sealContext(record.tenant_id, record.id));
  return {
    id: record.id,
    type: record.type,
    containers: record.containers,
    metadata: record.metadata,
    expires_at: record.expires_at,
    created_at: record.created_at,
    data: secret.data,
    ...(secret.mask !== undefined && { mask: secret.mask }),
  };
}

/** The tenant's state as entries, each list sorted by the caller (api/state.ts sortState). */
export function tenantEntries(store: Store, cipher: Cipher, tenantId: string): Omit<StateDocument, 'svc_state'> {
  return {
    applications: store.applications.list(tenantId).map(applicationEntry),
    reactors: store.reactors.list(tenantId).map((record) => reactorEntry(cipher, record)),
    proxies: store.proxies.list(tenantId).map((record) => proxyEntry(cipher, record)),
    tokens: store.tokens.list(tenantId).map((record) => tokenEntry(cipher, record)),
  };
}

/** What an entry becomes in the store under `tenantId`, `existing` being the record it replaces. */
export function recordOf(
  kind: StateKind,
  cipher: Cipher,
  tenantId: string,
  entry: StateApplication | StateReactor | StateProxy | StateToken,
  now: string,
  existing: { modified_by?: string; created_by?: string } | undefined,
): ApplicationRecord | ReactorRecord | ProxyRecord | TokenRecord {
  const owner = { tenant_id: tenantId, id: entry.id };
  const by = {
    ...(existing?.created_by !== undefined && { created_by: existing.created_by }),
    ...(existing?.modified_by !== undefined && { modified_by: existing.modified_by }),
  };
  switch (kind) {
    case 'applications': {
      const app = entry as StateApplication;
      return { ...app, tenant_id: tenantId, ...by, modified_at: now } satisfies ApplicationRecord;
    }
    case 'reactors': {
      const { configuration, ...reactor } = entry as StateReactor;
      return {
        ...reactor,
        tenant_id: tenantId,
        configuration_sealed: sealConfiguration(cipher, 'reactor', owner, configuration),
        ...by,
        modified_at: now,
      } satisfies ReactorRecord;
    }
    case 'proxies': {
      const { configuration, key, ...proxy } = entry as StateProxy;
      return {
        ...proxy,
        tenant_id: tenantId,
        key_hash: hashKey(key),
        key_sealed: cipher.seal(key, keyContext(tenantId, entry.id)),
        configuration_sealed: sealConfiguration(cipher, 'proxy', owner, configuration),
        ...by,
        modified_at: now,
      } satisfies ProxyRecord;
    }
    case 'tokens': {
      const { data, mask, ...token } = entry as StateToken;
      const secret: Secret = { data, ...(mask !== undefined && { mask }) };
      return {
        ...token,
        tenant_id: tenantId,
        ...(existing?.created_by !== undefined && { created_by: existing.created_by }),
        secret: cipher.seal(secret, sealContext(tenantId, entry.id)),
      } satisfies TokenRecord;
    }
  }
}

/** The same JSON, whatever the order of its keys: an entry that is unchanged is not written. */
export function sameEntry(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
