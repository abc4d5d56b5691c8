/** `--management-key -` and `--api-key -`: keys that stay out of argv and shell history. */
import { UsageError } from '../io/errors.js';
import { readKeyFromStdin } from '../io/input.js';
import type { IO } from '../io/process.js';
import { askHidden, canPrompt } from '../io/prompt.js';
import type { GlobalFlags } from './resolve.js';

const FLAGS = { managementKey: '--management-key', apiKey: '--api-key' } as const;
const LABELS = { managementKey: 'Management key', apiKey: 'API key' } as const;

/**
 * The global flags with each key given as `-` read: typed at a hidden prompt on a terminal, else the
 * first line of stdin. `stdinKeys` says which, for messages about where a key came from.
 */
export async function readKeyFlags<F extends GlobalFlags>(flags: F, io: IO): Promise<F> {
  const dashed = (['managementKey', 'apiKey'] as const).filter((name) => flags[name] === '-');
  if (dashed.length === 0) return flags;
  const read: Partial<Record<'managementKey' | 'apiKey', string>> = {};
  if (canPrompt(io)) {
    for (const name of dashed) {
      read[name] = await askHidden(io, `${LABELS[name]} (${FLAGS[name]} -): `);
      if (read[name] === '') throw new UsageError(`${FLAGS[name]} - got no key.`);
    }
  } else {
    const key = await readKeyFromStdin(
      dashed.map((name) => FLAGS[name]),
      io,
    );
    read[dashed[0]!] = key;
  }
  return { ...flags, ...read, stdinKeys: dashed };
}
