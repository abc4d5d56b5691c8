import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CREDENTIALS_FILE, STATE_DIR } from '../../api/defaults.js';
import { DurableJsonFile } from '../../lib/durable-file.js';
import { isRecord } from '../../lib/is-record.js';
import { UserError } from '../io/errors.js';

/** What `svc serve` writes to `.svc/credentials.json` for the CLI run beside it: its URL and both keys. */
export interface EmulatorCredentials {
  url?: string;
  management_key?: string;
  private_key?: string;
}

/** The nearest `.svc/credentials.json` from `cwd` upwards: the emulator started there. */
export function findCredentials(cwd: string): string | undefined {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const file = path.join(dir, STATE_DIR, CREDENTIALS_FILE);
    if (existsSync(file)) return file;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** The credentials file's content; a broken one is a one-line error saying how to mend it. */
export async function readCredentials(file: string): Promise<EmulatorCredentials> {
  try {
    const credentials = JSON.parse(await readFile(file, 'utf8'));
    if (!isRecord(credentials)) throw new Error('not an object');
    return credentials as EmulatorCredentials;
  } catch (error) {
    throw new UserError(
      `Cannot read the emulator credentials ${file} (${(error as Error).message}); restart \`svc serve\` or pass the keys.`,
    );
  }
}

/**
 * Replaces keys in the credentials file (after `svc applications regenerate` of a key it holds), keeping
 * the rest: written whole to a temp file (0600) and renamed over it, so a crash leaves the old file or the
 * new one, never half of each.
 */
export async function updateCredentials(
  file: string,
  keys: Pick<EmulatorCredentials, 'management_key' | 'private_key'>,
): Promise<void> {
  const current = await readCredentials(file);
  try {
    await new DurableJsonFile<EmulatorCredentials>(file).write({ ...current, ...keys });
  } catch (error) {
    const reason = (error as Error).message;
    throw new UserError(
      `Cannot update ${file} with the new key (${reason}); the new key is shown above: save it yourself.`,
    );
  }
}
