/** Where a command sends its requests, and with which keys: from flags, env, a profile or the local emulator. */
import { DEFAULT_BASE_URL } from '../../api/defaults.js';
import { findCredentials, readCredentials } from './credentials-file.js';
import { UserError } from '../io/errors.js';
import type { KeySource, ResolvedKey } from './key-source.js';
import { profilesFilePath, readProfilesFile, type Profile } from './profiles-file.js';

/** The global flags, as given on the command line only (env is read here, not by commander). */
export interface GlobalFlags {
  baseUrl?: string;
  managementKey?: string;
  apiKey?: string;
  profile?: string;
  /** The keys given as `-`, read from stdin (see readKeysFromStdin): their source says so. */
  stdinKeys?: readonly ('managementKey' | 'apiKey')[];
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
  /** Each key with where it came from (for messages); one key alone fills both. */
  keys: { management?: ResolvedKey; api?: ResolvedKey };
  /** The keys saved for this base URL (a profile's, the emulator credentials'), in use or not: see key rotation. */
  heldKeys: ResolvedKey[];
}

/**
 * Resolves the target: flags, then env (SVC_BASE_URL, SVC_MANAGEMENT_KEY, SVC_API_KEY), then a profile
 * named for this command (--profile, SVC_PROFILE), then the project folder's own emulator (its
 * `.svc/credentials.json`, written by `svc serve` there), then the current profile (`svc profiles use`),
 * then the default local URL. A folder's emulator beats the global current profile, so that a command
 * run beside `svc serve` never goes to a remote the user chose for elsewhere. When only one key is
 * known it serves for both kinds of work.
 */
export async function resolveTarget(
  flags: GlobalFlags,
  env: Record<string, string | undefined>,
  cwd: string,
): Promise<Target> {
  const config = await readProfilesFile(profilesFilePath(env));
  const credentialsFile = findCredentials(cwd);
  const named = flags.profile ?? env.SVC_PROFILE;
  const profileName = named ?? (credentialsFile === undefined ? config.current : undefined);
  let profile: Profile = {};
  if (profileName !== undefined) {
    const found = config.profiles[profileName];
    if (!found) {
      const known = Object.keys(config.profiles);
      throw new UserError(
        `No profile named "${profileName}"${known.length ? ` (known: ${known.join(', ')})` : ''}; add it with \`svc profiles add ${profileName} --base-url URL\`.`,
      );
    }
    profile = found;
  }

  const credentials = credentialsFile ? await readCredentials(credentialsFile) : {};
  const localUrl = checkBaseUrl(credentials.url ?? DEFAULT_BASE_URL);
  const explicit: [string | undefined, Target['source']][] = [
    [flags.baseUrl, 'flag'],
    [env.SVC_BASE_URL, 'env'],
    [profile.base_url, 'profile'],
  ];
  const [given, source] = explicit.find(([url]) => url) ?? [undefined, 'local' as const];
  const baseUrl = given === undefined ? localUrl : checkBaseUrl(given);

  // Saved keys go only to the server they were saved for: a profile's keys to its base URL (the
  // local emulator when it has none), the emulator's credentials to the emulator. Otherwise
  // `--base-url elsewhere` would send a production key to wherever it points.
  const profileUrl = profile.base_url === undefined ? localUrl : checkBaseUrl(profile.base_url);
  const saved: { management?: ResolvedKey; api?: ResolvedKey }[] = [];
  if (profileUrl === baseUrl && profileName !== undefined) {
    const from = (field: 'management_key' | 'api_key'): KeySource => ({ from: 'profile', profile: profileName, field });
    saved.push(keysOf(profile.management_key, from('management_key'), profile.api_key, from('api_key')));
  }
  if (localUrl === baseUrl && credentialsFile !== undefined) {
    const file = credentialsFile;
    const from = (field: 'management_key' | 'private_key'): KeySource => ({ from: 'credentials', file, field });
    saved.push(
      keysOf(credentials.management_key, from('management_key'), credentials.private_key, from('private_key')),
    );
  }
  const stdin = new Set(flags.stdinKeys);
  const fromFlags = keysOf(
    flags.managementKey,
    { from: 'flag', flag: '--management-key', stdin: stdin.has('managementKey') },
    flags.apiKey,
    { from: 'flag', flag: '--api-key', stdin: stdin.has('apiKey') },
  );
  const fromEnv = keysOf(env.SVC_MANAGEMENT_KEY, { from: 'env', variable: 'SVC_MANAGEMENT_KEY' }, env.SVC_API_KEY, {
    from: 'env',
    variable: 'SVC_API_KEY',
  });
  const candidates = [fromFlags, fromEnv, ...saved];
  let management = candidates.find((keys) => keys.management)?.management;
  let api = candidates.find((keys) => keys.api)?.api;
  management ??= api;
  api ??= management;
  const heldKeys = saved.flatMap((keys) => [keys.management, keys.api]).filter((key) => key !== undefined);
  return {
    baseUrl,
    source,
    ...(management !== undefined && { managementKey: management.value }),
    ...(api !== undefined && { apiKey: api.value }),
    ...(profileName !== undefined && { profile: profileName }),
    ...(credentialsFile !== undefined && localUrl === baseUrl && { credentialsFile }),
    keys: { ...(management && { management }), ...(api && { api }) },
    heldKeys,
  };
}

function keysOf(
  management: string | undefined,
  managementSource: KeySource,
  api: string | undefined,
  apiSource: KeySource,
): { management?: ResolvedKey; api?: ResolvedKey } {
  return {
    ...(management && { management: { value: management, source: managementSource, givenAs: 'management' as const } }),
    ...(api && { api: { value: api, source: apiSource, givenAs: 'api' as const } }),
  };
}

/** A base URL as the client takes it (http or https, no trailing slash), or a one-line error. */
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
