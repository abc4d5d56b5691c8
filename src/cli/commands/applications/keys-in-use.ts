/**
 * Which of the keys the CLI holds (the ones in use, and the ones saved for this server) belong to the
 * Application about to be deleted or given a new key: the warning before, and what to update after.
 */
import type { KeyKind } from '../../../client/index.js';
import { ApiError } from '../../../client/errors.js';
import { updateCredentials } from '../../target/credentials-file.js';
import { describeKey, maskKey, sourceName, type ResolvedKey } from '../../target/key-source.js';
import type { Target } from '../../target/resolve.js';

/** A key held, what the CLI uses it for, and whose it is: an Application id, or unknown, or invalid. */
export interface HeldKey {
  key: ResolvedKey;
  usedFor: KeyKind[];
  owner: string | 'unknown' | 'invalid';
}

/**
 * Every key held for the target, with its owner as the server tells it (`GET /applications/key`). A key
 * whose Application may not read Applications (403: private and public ones) has an unknown owner.
 */
export async function heldKeys(target: Target): Promise<HeldKey[]> {
  const held = new Map<string, HeldKey>();
  const add = (key: ResolvedKey, usedFor?: KeyKind) => {
    const id = `${sourceName(key.source)}\n${key.value}`;
    const entry = held.get(id) ?? { key, usedFor: [], owner: 'unknown' };
    if (usedFor && !entry.usedFor.includes(usedFor)) entry.usedFor.push(usedFor);
    held.set(id, entry);
  };
  if (target.keys.management) add(target.keys.management, 'management');
  if (target.keys.api) add(target.keys.api, 'api');
  for (const key of target.heldKeys) add(key);
  const entries = [...held.values()];
  const owners = await ownersOf(
    target.baseUrl,
    entries.map((entry) => entry.key.value),
  );
  for (const entry of entries) entry.owner = owners.get(entry.key.value) ?? 'unknown';
  return entries;
}

/** The held keys known to be Application `id`'s. */
export function keysOwnedBy(held: HeldKey[], id: string): HeldKey[] {
  return held.filter((entry) => entry.owner === id);
}

/**
 * Runs `change` (a delete or a regenerate of Application `id`) and resolves to its result and the held
 * keys it stopped: those known to be the Application's, and those of unknown owner that no longer work.
 */
export async function keysStoppedBy<T>(
  target: Target,
  held: HeldKey[],
  id: string,
  change: () => Promise<T>,
): Promise<[T, HeldKey[]]> {
  const result = await change();
  const unknown = held.filter((entry) => entry.owner === 'unknown');
  const now = await ownersOf(
    target.baseUrl,
    unknown.map((entry) => entry.key.value),
  );
  return [result, [...keysOwnedBy(held, id), ...unknown.filter((entry) => now.get(entry.key.value) === 'invalid')]];
}

/** `the management key svc is using (from …, key_…)`, or `the API key saved in …`. */
export function heldKeyPhrase(entry: HeldKey): string {
  const { key, usedFor } = entry;
  const kind = key.givenAs === 'management' ? 'management key' : 'API key';
  const where = `${sourceName(key.source)}, ${maskKey(key.value)}`;
  if (usedFor.length === 0) return `the ${kind} saved in ${sourceName(key.source)}`;
  return `the ${kind} svc is using (from ${where})`;
}

/**
 * After a regenerate: the credentials file gets the new key (atomically, 0600); for a profile, an
 * environment variable or a flag, the lines say what to update. Resolves to those lines.
 */
export async function replaceHeldKeys(affected: HeldKey[], newKey: string): Promise<string[]> {
  const lines: string[] = [];
  for (const { key } of affected) {
    const source = key.source;
    const flag = key.givenAs === 'management' ? '--management-key' : '--api-key';
    switch (source.from) {
      case 'credentials':
        await updateCredentials(source.file, { [source.field]: newKey });
        lines.push(`Updated ${source.file} (${source.field}) with the new key.`);
        break;
      case 'profile':
        lines.push(
          `Profile "${source.profile}" holds the old key: update it with ` +
            `\`svc profiles add ${source.profile} ${flag} -\` (the new key on stdin).`,
        );
        break;
      case 'env':
        lines.push(`${source.variable} holds the old key, which no longer works: set it to the new one.`);
        break;
      case 'flag':
        lines.push(
          `The key given with ${source.flag} is the old one and no longer works: use the new one from now on.`,
        );
        break;
    }
  }
  return lines;
}

/** After a delete: which held keys stopped working. */
export function deletedKeyLines(affected: HeldKey[]): string[] {
  return affected.map((entry) => `${capitalize(describeKey(entry.key))} was this Application's: it no longer works.`);
}

function capitalize(text: string): string {
  return `${text[0]?.toUpperCase()}${text.slice(1)}`;
}

/** Asks the server whose each key is; every distinct key once. */
async function ownersOf(baseUrl: string, keys: string[]): Promise<Map<string, HeldKey['owner']>> {
  const { ApiClient } = await import('../../../client/index.js');
  const distinct = [...new Set(keys)];
  const owners = await Promise.all(
    distinct.map(async (key): Promise<HeldKey['owner']> => {
      try {
        return (await new ApiClient({ baseUrl, managementKey: key }).applications.self()).id;
      } catch (error) {
        return error instanceof ApiError && error.status === 401 ? 'invalid' : 'unknown';
      }
    }),
  );
  return new Map(distinct.map((key, i) => [key, owners[i]!]));
}
