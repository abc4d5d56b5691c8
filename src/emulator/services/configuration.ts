import type { WriteBatch } from '../store/batch.js';
import type { Store } from '../store/store.js';
import type { ProxyRecord, ReactorRecord } from '../store/records.js';
import type { Cipher, Sealed } from '../crypto/cipher.js';

/**
 * Reactor and proxy `configuration` maps hold third-party API keys, so they are sealed at rest like
 * token data: the API and the code get them as given; the store files hold only ciphertext, bound
 * to the record it belongs to (a sealed value moved to another record does not open).
 */
export type ConfiguredKind = 'reactor' | 'proxy';

interface Owner {
  tenant_id: string;
  id: string;
}

export function sealConfiguration(
  cipher: Cipher,
  kind: ConfiguredKind,
  owner: Owner,
  configuration: Record<string, string> | null,
): Sealed {
  return cipher.seal(configuration, contextOf(kind, owner));
}

export function openConfiguration<T extends Record<string, string> | null>(
  cipher: Cipher,
  kind: ConfiguredKind,
  record: Owner & { configuration_sealed: Sealed },
): T {
  return cipher.open<T>(record.configuration_sealed, contextOf(kind, record));
}

/** A record as an earlier svc stored it: the configuration in plaintext. */
type Plaintext<T> = Omit<T, 'configuration_sealed'> & {
  configuration?: Record<string, string> | null;
  configuration_sealed?: Sealed;
};

/**
 * In `batch`: seals the configuration of records an earlier svc stored in plaintext; run in one
 * write as the store opens, before anything is served, so a crash or a failed write leaves every
 * record as it was (a record reads the same in either form), and the next open seals them. A record
 * holding both forms was written back by an earlier svc after it was sealed: its plaintext is the
 * newer. Returns how many records were sealed.
 */
export function sealPlaintextConfigurations(store: Store, cipher: Cipher, batch: WriteBatch): number {
  let sealed = 0;
  for (const saved of store.reactors.everything()) {
    const latest = batch.get(store.reactors, saved.tenant_id, saved.id);
    if (!latest || !hasPlaintext(latest)) continue;
    const { configuration, ...rest } = latest as Plaintext<ReactorRecord>;
    batch.put(store.reactors, {
      ...rest,
      configuration_sealed: sealConfiguration(cipher, 'reactor', latest, configuration ?? {}),
    });
    sealed++;
  }
  for (const saved of store.proxies.everything()) {
    const latest = batch.get(store.proxies, saved.tenant_id, saved.id);
    if (!latest || !hasPlaintext(latest)) continue;
    const { configuration, ...rest } = latest as Plaintext<ProxyRecord>;
    batch.put(store.proxies, {
      ...rest,
      configuration_sealed: sealConfiguration(cipher, 'proxy', latest, configuration ?? null),
    });
    sealed++;
  }
  return sealed;
}

/**
 * In `batch`, for a store whose master key was lost: each reactor and proxy whose configuration no
 * longer opens (sealed under the old key) gets an empty one sealed under `cipher` (`{}` for a
 * reactor, null for a proxy), so it serves again. Run after sealPlaintextConfigurations, whose
 * records open. Returns the names of those whose configuration must be entered again.
 */
export function resetLostConfigurations(
  store: Store,
  cipher: Cipher,
  batch: WriteBatch,
): { reactors: string[]; proxies: string[] } {
  const reactors: string[] = [];
  for (const saved of store.reactors.everything()) {
    const latest = batch.get(store.reactors, saved.tenant_id, saved.id);
    if (!latest || opens(cipher, 'reactor', latest)) continue;
    batch.put(store.reactors, { ...latest, configuration_sealed: sealConfiguration(cipher, 'reactor', latest, {}) });
    reactors.push(latest.name);
  }
  const proxies: string[] = [];
  for (const saved of store.proxies.everything()) {
    const latest = batch.get(store.proxies, saved.tenant_id, saved.id);
    if (!latest || opens(cipher, 'proxy', latest)) continue;
    batch.put(store.proxies, { ...latest, configuration_sealed: sealConfiguration(cipher, 'proxy', latest, null) });
    proxies.push(latest.name);
  }
  return { reactors, proxies };
}

function opens(cipher: Cipher, kind: ConfiguredKind, record: Owner & { configuration_sealed: Sealed }): boolean {
  try {
    openConfiguration(cipher, kind, record);
    return true;
  } catch {
    return false;
  }
}

function hasPlaintext(record: object): boolean {
  return 'configuration' in record;
}

function contextOf(kind: ConfiguredKind, owner: Owner): string {
  return `${kind}-configuration:${owner.tenant_id}:${owner.id}`;
}
