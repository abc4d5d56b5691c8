import { configPath, readConfig, writeConfig, type ConfigFile } from '../../config.js';
import { UserError } from '../../errors.js';
import type { Context } from '../../context.js';

export const profileArg = { name: 'name', description: 'profile name' } as const;

/** Reads the config file, lets `change` edit it, writes it back (0600). */
export async function editConfig(ctx: Context, change: (config: ConfigFile) => void): Promise<ConfigFile> {
  const file = configPath(ctx.io.env);
  const config = await readConfig(file);
  change(config);
  await writeConfig(file, config);
  return config;
}

export function requireProfile(config: ConfigFile, name: string): void {
  if (!config.profiles[name]) {
    const known = Object.keys(config.profiles);
    throw new UserError(`No profile named "${name}"${known.length ? ` (known: ${known.join(', ')})` : ''}.`);
  }
}
