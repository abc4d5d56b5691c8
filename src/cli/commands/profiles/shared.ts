import {
  profilesFilePath,
  readProfilesFile,
  writeProfilesFile,
  type ProfilesFile,
} from '../../target/profiles-file.js';
import { UserError } from '../../io/errors.js';
import type { Context } from '../../context.js';

export const profileArg = { name: 'name', description: 'profile name' } as const;

/** Reads the profiles file, lets `change` edit it, writes it back (0600). */
export async function editProfiles(ctx: Context, change: (config: ProfilesFile) => void): Promise<ProfilesFile> {
  const file = profilesFilePath(ctx.io.env);
  const config = await readProfilesFile(file);
  change(config);
  await writeProfilesFile(file, config);
  return config;
}

/** A profile that exists, or a one-line error naming the known ones (and `hint`, when given). */
export function requireProfile(config: ProfilesFile, name: string, hint = ''): void {
  if (!config.profiles[name]) {
    const known = Object.keys(config.profiles);
    throw new UserError(`No profile named "${name}"${known.length ? ` (known: ${known.join(', ')})` : ''}${hint}.`);
  }
}
