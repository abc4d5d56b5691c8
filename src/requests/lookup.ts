import { isUuid } from '../api/patterns.js';
import { MAX_NAME_LENGTH } from '../api/limits.js';
import { ApiError, type ApiClient } from '../client/index.js';
import { NameLookupDeniedError, NameLookupError, type ResourceNoun } from './errors.js';

type ListAll<T> = (name: string) => Promise<T[]>;

/**
 * Every resource named exactly `name` (case and all: a name-based command must find it the same way).
 * The server's `name` filter is a case-insensitive wildcard, so it narrows the list and the exact match
 * is made here. A key that may not list the resources is a NameLookupDeniedError.
 */
export async function findByName<T extends { id: string; name: string }>(
  name: string,
  all: ListAll<T>,
  noun: ResourceNoun,
): Promise<T[]> {
  if (name.length > MAX_NAME_LENGTH) return [];
  try {
    return (await all(name)).filter((item) => item.name === name);
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) throw new NameLookupDeniedError(noun, name, error);
    throw error;
  }
}

/**
 * An id is used as it is; a name is looked up in `all()` (with the management key) and must match
 * exactly one resource, else a NameLookupError says whether none or several did.
 */
export async function resolveByName<T extends { id: string; name: string }>(
  idOrName: string,
  all: ListAll<T>,
  noun: ResourceNoun,
): Promise<string> {
  if (isUuid(idOrName)) return idOrName;
  const matches = await findByName(idOrName, all, noun);
  if (matches.length === 1) return matches[0]!.id;
  throw new NameLookupError(
    noun,
    idOrName,
    matches.map((item) => item.id),
  );
}

export function resolveApplicationId(client: ApiClient, idOrName: string): Promise<string> {
  return resolveByName(idOrName, (name) => client.applications.all(name), 'Application');
}

export function resolveReactorId(client: ApiClient, idOrName: string): Promise<string> {
  return resolveByName(idOrName, (name) => client.reactors.all(name), 'reactor');
}

export function resolveProxyId(client: ApiClient, idOrName: string): Promise<string> {
  return resolveByName(idOrName, (name) => client.proxies.all(name), 'proxy');
}

/** The lister of each noun, for findByName. */
export function listerOf(client: ApiClient, noun: ResourceNoun): ListAll<{ id: string; name: string }> {
  const lists = { Application: client.applications, reactor: client.reactors, proxy: client.proxies };
  return (name) => lists[noun].all(name);
}
