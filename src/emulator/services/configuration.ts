import type { Store } from '../store/store.js';
import type { ProxyRecord, ReactorRecord } from '../store/records.js';
import type { Cipher, Sealed } from './cipher.js';

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

export function sealConfiguration(cipher: Cipher, kind: ConfiguredKind, owner: Owner, configuration: Record<string, string> | null): Sealed {
  return cipher.seal(configuration, contextOf(kind, owner));
}

export function openConfiguration<T extends Record<string, string> | null>(cipher: Cipher, kind: ConfiguredKind, record: Owner & { configuration_sealed: Sealed }): T {
  return cipher.open<T>(record.configuration_sealed, contextOf(kind, record));
}

/** A record as an earlier svc stored it: the configuration in plaintext. */
type Plaintext<T> = Omit<T, 'configuration_sealed'> & { configuration?: Record<string, string> | null; configuration_sealed?: Sealed };

/**
 * Seals the configuration of records an earlier svc stored in plaintext; run as the store opens,
 * before anything is served. Each record is replaced by one atomic write of its collection's file,
 * and a record reads the same in either form, so a crash midway leaves a store that opens, and the
 * next open seals what is left. A record holding both forms was written back by an earlier svc
 * after it was sealed: its plaintext is the newer. Returns how many records were sealed.
 */
export async function sealPlaintextConfigurations(store: Store, cipher: Cipher): Promise<number> {
  const reactors = [...store.reactors.everything()].filter(hasPlaintext);
  const proxies = [...store.proxies.everything()].filter(hasPlaintext);
  await Promise.all([
    ...reactors.map((record) => {
      const { configuration, ...rest } = record as Plaintext<ReactorRecord>;
      return store.reactors.put({ ...rest, configuration_sealed: sealConfiguration(cipher, 'reactor', record, configuration ?? {}) });
    }),
    ...proxies.map((record) => {
      const { configuration, ...rest } = record as Plaintext<ProxyRecord>;
      return store.proxies.put({ ...rest, configuration_sealed: sealConfiguration(cipher, 'proxy', record, configuration ?? null) });
    }),
  ]);
  return reactors.length + proxies.length;
}

function hasPlaintext(record: object): boolean {
  return 'configuration' in record;
}

function contextOf(kind: ConfiguredKind, owner: Owner): string {
  return `${kind}-configuration:${owner.tenant_id}:${owner.id}`;
}
