import { profilesFilePath, readProfilesFile } from '../../profiles-file.js';
import { defineCommand } from '../../registry.js';

export const list = defineCommand({
  name: 'list',
  aliases: ['ls'],
  description: 'list saved profiles (keys masked)',
  async handler(_input, ctx) {
    const config = await readProfilesFile(profilesFilePath(ctx.io.env));
    const rows = Object.entries(config.profiles).map(([name, profile]) => ({
      name,
      current: config.current === name,
      base_url: profile.base_url ?? null,
      management_key: profile.management_key ? maskKey(profile.management_key) : null,
      api_key: profile.api_key ? maskKey(profile.api_key) : null,
    }));
    await ctx.output.result(rows, () =>
      ctx.output.table(
        rows,
        [
          { header: '', value: (row) => (row.current ? '*' : '') },
          { header: 'NAME', value: (row) => row.name },
          { header: 'BASE URL', value: (row) => row.base_url ?? '(local emulator)' },
          { header: 'MANAGEMENT KEY', value: (row) => row.management_key ?? '-' },
          { header: 'API KEY', value: (row) => row.api_key ?? '-' },
        ],
        'No profiles; add one with `svc profiles add NAME --base-url URL`.',
      ),
    );
  },
});

/**
 * `key_local_mgt_…AbCd`: enough to tell keys apart, never enough to use one. Only the public
 * prefix of a platform key is kept; of any other key, at most its last four characters.
 */
function maskKey(key: string | undefined): string {
  if (!key) return '';
  const prefix = /^key_[a-z]+_(?:pvt|pub|mgt)_/.exec(key)?.[0] ?? '';
  return key.length - prefix.length >= 16 ? `${prefix}…${key.slice(-4)}` : `${prefix}…`;
}
