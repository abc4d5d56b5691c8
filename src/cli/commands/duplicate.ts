import type { ApiClient } from '../../client/index.js';
import { NameLookupDeniedError, PLURAL, type ResourceNoun } from '../../requests/errors.js';
import { findByName, listerOf } from '../../requests/lookup.js';
import { UserError } from '../io/errors.js';

/** `--allow-duplicate`, as create commands of named resources take it. */
export const allowDuplicateOption = {
  flags: '--allow-duplicate',
  description: 'create it even when one with this name exists (commands then need the id to tell them apart)',
} as const;

/**
 * Refuses to create a second resource with a name that one has already (unless `allow`): every command
 * that takes a name would fail on it from then on. Says how to change the one that exists instead.
 */
export async function refuseDuplicate(
  client: ApiClient,
  noun: ResourceNoun,
  name: string,
  allow: boolean | undefined,
): Promise<void> {
  if (allow) return;
  let existing: { id: string }[];
  try {
    existing = await findByName(name, listerOf(client, noun), noun);
  } catch (error) {
    if (!(error instanceof NameLookupDeniedError)) throw error;
    const reason = error.cause.message.replace(/\.$/, '');
    throw new UserError(
      `Cannot check whether ${article(noun)} ${noun} named "${name}" exists (${reason}); ` +
        'pass --allow-duplicate to create it unchecked.',
      { cause: error },
    );
  }
  if (existing.length === 0) return;
  const update = `svc ${PLURAL[noun].toLowerCase()} update ${shellWord(name)}`;
  throw new UserError(
    `${capitalize(article(noun))} ${noun} named "${name}" already exists (${existing.map(({ id }) => id).join(', ')}): ` +
      `change it with \`${update}\` or \`svc apply\`, or pass --allow-duplicate to create another.`,
  );
}

function article(noun: ResourceNoun): string {
  return noun === 'Application' ? 'an' : 'a';
}

function capitalize(text: string): string {
  return `${text[0]?.toUpperCase()}${text.slice(1)}`;
}

/** The name as a shell word: as it is when plain, else single-quoted. */
function shellWord(text: string): string {
  return /^[\w.@%+=:,/-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}
