/** Where a command sends its requests, and with which keys: from flags, env, a profile or the local emulator. */
import { findCredentials, readCredentials } from './credentials-file.js';
import { UserError } from './errors.js';
import { profilesFilePath, readProfilesFile, type Profile } from './profiles-file.js';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8790';

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
  const config = await readProfilesFile(profilesFilePath(env));
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
