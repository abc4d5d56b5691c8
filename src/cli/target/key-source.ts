/** Where a key the CLI uses came from, so that messages can say it without showing the key. */
import type { KeyKind } from '../../client/index.js';

export type KeySource =
  | { from: 'flag'; flag: '--management-key' | '--api-key'; stdin: boolean }
  | { from: 'env'; variable: 'SVC_MANAGEMENT_KEY' | 'SVC_API_KEY' }
  | { from: 'profile'; profile: string; field: 'management_key' | 'api_key' }
  | { from: 'credentials'; file: string; field: 'management_key' | 'private_key' };

/** A key as the target resolved it: its value, where it came from, and what it was given as. */
export interface ResolvedKey {
  value: string;
  source: KeySource;
  /** The kind of key it was given as; a key serves for the other kind when that one is missing. */
  givenAs: KeyKind;
}

/** `--api-key`, `SVC_MANAGEMENT_KEY`, `profile "staging"`, `/home/me/app/.svc/credentials.json`. */
export function sourceName(source: KeySource): string {
  switch (source.from) {
    case 'flag':
      return source.stdin ? `${source.flag} - (stdin)` : source.flag;
    case 'env':
      return source.variable;
    case 'profile':
      return `profile "${source.profile}"`;
    case 'credentials':
      return source.file;
  }
}

const KIND_NAME: Record<KeyKind, string> = { management: 'management key', api: 'API key' };

/**
 * `the management key from SVC_MANAGEMENT_KEY (key_local_mgt_…AbCd)`; a key sent for the other kind of
 * work says so: `the API key from --api-key (…), standing in for the management key (none was given)`.
 */
export function describeKey(key: ResolvedKey, usedAs: KeyKind = key.givenAs): string {
  return `the ${KIND_NAME[key.givenAs]} from ${sourceName(key.source)} (${maskKey(key.value)})${standIn(key, usedAs)}`;
}

/** The same, the masked key first: `key_local_mgt_…AbCd, the management key from SVC_MANAGEMENT_KEY`. */
export function describeKeyShort(key: ResolvedKey, usedAs: KeyKind = key.givenAs): string {
  return `${maskKey(key.value)}, the ${KIND_NAME[key.givenAs]} from ${sourceName(key.source)}${standIn(key, usedAs)}`;
}

function standIn(key: ResolvedKey, usedAs: KeyKind): string {
  return usedAs === key.givenAs ? '' : `, standing in for the ${KIND_NAME[usedAs]} (none was given)`;
}

/** The key as `--json` output may show it: what it is and where it came from, masked. */
export function keyJson(key: ResolvedKey): { kind: KeyKind; key: string; source: KeySource['from']; from: string } {
  return {
    kind: key.givenAs,
    key: maskKey(key.value),
    source: key.source.from,
    from: key.source.from === 'flag' ? key.source.flag : sourceName(key.source),
  };
}

/**
 * `key_local_mgt_…AbCd`: enough to tell keys apart, never enough to use one. Only the public
 * prefix of a platform key is kept; of any other key, at most its last four characters.
 */
export function maskKey(key: string): string {
  if (!key) return '';
  const prefix = /^key_[a-z]+_(?:pvt|pub|mgt)_/.exec(key)?.[0] ?? '';
  return key.length - prefix.length >= 16 ? `${prefix}…${key.slice(-4)}` : `${prefix}…`;
}
