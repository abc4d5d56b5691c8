import { parseEnv } from 'node:util';
import { InvalidInputError } from './errors.js';

/**
 * A `.env` text as a configuration map: KEY=VALUE lines, comments, quotes and `export` as dotenv
 * reads them (Node's own parser, so the CLI and `svc apply` read a file alike).
 */
export function parseEnvText(text: string): Record<string, string> {
  // parseEnv's values are all strings; its type says `string | undefined` per key.
  const entries = Object.entries(parseEnv(text));
  return Object.fromEntries(entries.filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/**
 * One `KEY=VALUE` pair (the value may hold `=` and be empty). `label` names the input in the message
 * (`--metadata`); `form` says what it takes when more than a pair is accepted there.
 */
export function parsePair(pair: string, label: string, form = 'KEY=VALUE'): [string, string] {
  const at = pair.indexOf('=');
  if (at <= 0) throw new InvalidInputError(`${label} takes ${form}, not "${pair}".`);
  return [pair.slice(0, at), pair.slice(at + 1)];
}

/** `KEY=VALUE` pairs into a map, later pairs winning; `undefined` stays "not given". */
export function parsePairs(pairs: readonly string[] | undefined, label: string): Record<string, string> | undefined {
  if (pairs === undefined) return undefined;
  return Object.fromEntries(pairs.map((pair) => parsePair(pair, label)));
}

/**
 * The configuration part of a merge patch: the keys to set, and `null` for each key to remove.
 * `undefined` when there is nothing to change, so the patch leaves configuration out.
 */
export function configurationPatch(
  set: Record<string, string> | undefined,
  unset: readonly string[] | undefined,
): Record<string, string | null> | undefined {
  const patch: Record<string, string | null> = { ...set };
  for (const key of unset ?? []) patch[key] = null;
  return Object.keys(patch).length > 0 ? patch : undefined;
}
