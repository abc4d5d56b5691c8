import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CREDENTIALS_FILE, DEFAULT_BASE_URL, STATE_DIR } from '../api/defaults.js';
import { DurableJsonFile } from '../lib/durable-file.js';
import { UserError } from './errors.js';

export interface Profile {
  base_url?: string;
  management_key?: string;
  api_key?: string;
}

export interface ConfigFile {
  current?: string;
  profiles: Record<string, Profile>;
}

/** The global flags, as given on the command line only (env is read here, not by commander). */
export interface GlobalFlags {
  baseUrl?: string;
  managementKey?: string;
  apiKey?: string;
  profile?: string;
}

/** Where commands send their requests, and with which keys. */
export interface Target {
  baseUrl: string;
  managementKey?: string;
  apiKey?: string;
  /** How the base URL was chosen, for messages. */
  source: 'flag' | 'env' | 'profile' | 'local';
  profile?: string;
  /** The emulator credentials file that supplied the keys, when local. */
  credentialsFile?: string;
}

export const PROFILE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function configPath(env: Record<string, string | undefined>): string {
  const home = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), '.config');
  return path.join(home, 'svc', 'config.json');
}

export async function readConfig(file: string): Promise<ConfigFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw new UserError(`Cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    const config = JSON.parse(text) as ConfigFile;
    if (!isObject(config) || !isObject(config.profiles)) throw new Error('no "profiles" object');
    for (const [name, profile] of Object.entries(config.profiles)) {
      if (!isObject(profile)) throw new Error(`profile "${name}" is not an object`);
      for (const field of ['base_url', 'management_key', 'api_key'] as const) {
        if (profile[field] !== undefined && typeof profile[field] !== 'string') throw new Error(`${name}.${field} is not a string`);
      }
    }
    if (config.current !== undefined && typeof config.current !== 'string') throw new Error('"current" is not a string');
    return config;
  } catch (error) {
    throw new UserError(`${file} is not a valid svc config (${(error as Error).message}); fix it or move it aside.`);
  }
}

/** Writes the config atomically, owner-only (it holds keys). */
export async function writeConfig(file: string, config: ConfigFile): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await new DurableJsonFile<ConfigFile>(file).write(config);
}

/** The nearest `.svc/credentials.json` from `cwd` upwards: the emulator started there. */
export function findCredentials(cwd: string): string | undefined {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const file = path.join(dir, STATE_DIR, CREDENTIALS_FILE);
    if (existsSync(file)) return file;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * Resolves the target: flags, then env (SVC_BASE_URL, SVC_MANAGEMENT_KEY, SVC_API_KEY), then the
 * profile (--profile, SVC_PROFILE, or the one `svc profiles use` chose). With no base URL anywhere,
 * the local emulator: its URL and both keys from `.svc/credentials.json`. When only one key is
 * known it serves for both kinds of work.
 */
export async function resolveTarget(
  flags: GlobalFlags,
  env: Record<string, string | undefined>,
  cwd: string,
): Promise<Target> {
  const config = await readConfig(configPath(env));
  const profileName = flags.profile ?? env.SVC_PROFILE ?? config.current;
  let profile: Profile = {};
  if (profileName !== undefined) {
    const found = config.profiles[profileName];
    if (!found) {
      const known = Object.keys(config.profiles);
      throw new UserError(`No profile named "${profileName}"${known.length ? ` (known: ${known.join(', ')})` : ''}; add it with \`svc profiles add ${profileName} --base-url URL\`.`);
    }
    profile = found;
  }

  const credentialsFile = findCredentials(cwd);
  const credentials = credentialsFile ? await readCredentials(credentialsFile) : {};
  const localUrl = checkBaseUrl(credentials.url ?? DEFAULT_BASE_URL);
  const explicit: [string | undefined, Target['source']][] = [[flags.baseUrl, 'flag'], [env.SVC_BASE_URL, 'env'], [profile.base_url, 'profile']];
  const [given, source] = explicit.find(([url]) => url) ?? [undefined, 'local' as const];
  const baseUrl = given === undefined ? localUrl : checkBaseUrl(given);

  // Saved keys go only to the server they were saved for: a profile's keys to its base URL (the
  // local emulator when it has none), the emulator's credentials to the emulator. Otherwise
  // `--base-url elsewhere` would send a production key to wherever it points.
  const profileUrl = profile.base_url === undefined ? localUrl : checkBaseUrl(profile.base_url);
  const saved = [
    ...(profileUrl === baseUrl ? [{ management: profile.management_key, api: profile.api_key }] : []),
    ...(localUrl === baseUrl ? [{ management: credentials.management_key, api: credentials.private_key }] : []),
  ];
  let managementKey = flags.managementKey ?? env.SVC_MANAGEMENT_KEY ?? saved.find((keys) => keys.management)?.management;
  let apiKey = flags.apiKey ?? env.SVC_API_KEY ?? saved.find((keys) => keys.api)?.api;
  managementKey ??= apiKey;
  apiKey ??= managementKey;
  return {
    baseUrl,
    source,
    ...(managementKey !== undefined && { managementKey }),
    ...(apiKey !== undefined && { apiKey }),
    ...(profileName !== undefined && { profile: profileName }),
    ...(credentialsFile !== undefined && localUrl === baseUrl && { credentialsFile }),
  };
}

export function checkBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UserError(`The base URL "${value}" is not a valid URL (e.g. https://api.example.com).`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UserError(`The base URL "${value}" must use http or https.`);
  }
  return value.replace(/\/+$/, '');
}

async function readCredentials(file: string): Promise<{ url?: string; management_key?: string; private_key?: string }> {
  try {
    const credentials = JSON.parse(await readFile(file, 'utf8'));
    if (!isObject(credentials)) throw new Error('not an object');
    return credentials;
  } catch (error) {
    throw new UserError(`Cannot read the emulator credentials ${file} (${(error as Error).message}); restart \`svc serve\` or pass the keys.`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `key_local_mgt_…AbCd`: enough to tell keys apart, never enough to use one. Only the public
 * prefix of a platform key is kept; of any other key, at most its last four characters.
 */
export function maskKey(key: string | undefined): string {
  if (!key) return '';
  const prefix = /^key_[a-z]+_(?:pvt|pub|mgt)_/.exec(key)?.[0] ?? '';
  return key.length - prefix.length >= 16 ? `${prefix}…${key.slice(-4)}` : `${prefix}…`;
}
