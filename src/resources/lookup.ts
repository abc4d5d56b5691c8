import type { ApiClient } from '../client/index.js';
import { NameLookupError, type ResourceNoun } from './errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/**
 * An id is used as it is; a name is looked up in `all()` (with the management key) and must match
 * exactly one resource, else a NameLookupError says whether none or several did.
 */
export async function resolveByName<T extends { id: string; name: string }>(
  idOrName: string,
  all: () => Promise<T[]>,
  noun: ResourceNoun,
): Promise<string> {
  if (isUuid(idOrName)) return idOrName;
  const matches = (await all()).filter((item) => item.name === idOrName);
  if (matches.length === 1) return matches[0]!.id;
  throw new NameLookupError(noun, idOrName, matches.map((item) => item.id));
}

export function resolveApplicationId(client: ApiClient, idOrName: string): Promise<string> {
  return resolveByName(idOrName, () => client.applications.all(), 'Application');
}

export function resolveReactorId(client: ApiClient, idOrName: string): Promise<string> {
  return resolveByName(idOrName, () => client.reactors.all(), 'reactor');
}

export function resolveProxyId(client: ApiClient, idOrName: string): Promise<string> {
  return resolveByName(idOrName, () => client.proxies.all(), 'proxy');
}
