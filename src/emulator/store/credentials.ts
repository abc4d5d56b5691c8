import { readFile, rename } from 'node:fs/promises';
import path from 'node:path';
import { CREDENTIALS_FILE } from '../../api/defaults.js';
import { DurableJsonFile } from '../../lib/durable-file.js';
import { cannotWrite } from './errors.js';

/** What `svc serve` leaves beside its data file for the CLI: where it listens and its two keys. */
export interface Credentials {
  url?: string;
  tenant_id?: string;
  management_key?: string;
  private_key?: string;
}

export function credentialsPath(dir: string): string {
  return path.join(dir, CREDENTIALS_FILE);
}

/** The credentials file as it is: empty when missing or unreadable (writeCredentials then moves it aside). */
export async function readCredentials(file: string): Promise<Credentials> {
  try {
    const current = JSON.parse(await readFile(file, 'utf8')) as unknown;
    return typeof current === 'object' && current !== null && !Array.isArray(current) ? (current as Credentials) : {};
  } catch {
    return {};
  }
}

/**
 * Merges what this start knows into the credentials file (0600). Keys that were generated on an
 * earlier start exist nowhere else in plaintext, so they are kept unless replaced; an unreadable
 * file is moved aside to `credentials.json.bak` rather than overwritten.
 */
export async function writeCredentials(file: string, update: Credentials): Promise<void> {
  let current: Credentials = {};
  try {
    current = JSON.parse(await readFile(file, 'utf8')) as Credentials;
    if (typeof current !== 'object' || current === null) throw new Error('not an object');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') await rename(file, `${file}.bak`).catch(() => {});
    current = {};
  }
  const merged: Credentials = { ...current };
  for (const [field, value] of Object.entries(update) as [keyof Credentials, string | undefined][]) {
    if (value !== undefined) merged[field] = value;
  }
  await new DurableJsonFile<Credentials>(file).write(merged).catch((error: unknown) => {
    throw cannotWrite(file, error);
  });
}
