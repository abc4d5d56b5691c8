import { isUuid } from '../api/patterns.js';
import { UserError } from './errors.js';

/**
 * An id is used as it is; a name is looked up in `all()` (with the management key) and must
 * match exactly one resource. `noun` names the resource in messages, `listCommand` how to see them.
 */
export async function resolveByName<T extends { id: string; name: string }>(
  idOrName: string,
  all: () => Promise<T[]>,
  noun: string,
  listCommand: string,
): Promise<string> {
  if (isUuid(idOrName)) return idOrName;
  const matches = (await all()).filter((item) => item.name === idOrName);
  if (matches.length === 1) return matches[0]!.id;
  if (matches.length === 0) throw new UserError(`No ${noun} named "${idOrName}"; \`${listCommand}\` shows them.`);
  throw new UserError(`${matches.length} ${noun}s are named "${idOrName}"; use an id: ${matches.map((item) => item.id).join(', ')}.`);
}
