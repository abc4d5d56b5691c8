/** The user's svc config file (`~/.config/svc/config.json`): the saved profiles and the current one. */
import { makeDirectory } from '../../lib/make-directory.js';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DurableJsonFile } from '../../lib/durable-file.js';
import { UserError } from '../io/errors.js';
import { isRecord } from '../../lib/is-record.js';

export interface Profile {
  base_url?: string;
  management_key?: string;
  api_key?: string;
}

export interface ProfilesFile {
  current?: string;
  profiles: Record<string, Profile>;
}

export const PROFILE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** `$XDG_CONFIG_HOME/svc/config.json`, or `~/.config/svc/config.json`. */
export function profilesFilePath(env: Record<string, string | undefined>): string {
  const home = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), '.config');
  return path.join(home, 'svc', 'config.json');
}

/** The saved profiles (none when there is no file); a broken file is a one-line error saying so. */
export async function readProfilesFile(file: string): Promise<ProfilesFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw new UserError(`Cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    const config = JSON.parse(text) as ProfilesFile;
    if (!isRecord(config) || !isRecord(config.profiles)) throw new Error('no "profiles" object');
    for (const [name, profile] of Object.entries(config.profiles)) {
      if (!isRecord(profile)) throw new Error(`profile "${name}" is not an object`);
      for (const field of ['base_url', 'management_key', 'api_key'] as const) {
        if (profile[field] !== undefined && typeof profile[field] !== 'string')
          throw new Error(`${name}.${field} is not a string`);
      }
    }
    if (config.current !== undefined && typeof config.current !== 'string')
      throw new Error('"current" is not a string');
    return config;
  } catch (error) {
    throw new UserError(`${file} is not a valid svc config (${(error as Error).message}); fix it or move it aside.`);
  }
}

/** Writes the profiles file atomically, owner-only (it holds keys). */
export async function writeProfilesFile(file: string, config: ProfilesFile): Promise<void> {
  await makeDirectory(path.dirname(file), 0o700);
  await new DurableJsonFile<ProfilesFile>(file).write(config);
}
