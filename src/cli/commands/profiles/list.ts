import { maskKey } from '../../target/key-source.js';
import { profilesFilePath, readProfilesFile } from '../../target/profiles-file.js';
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
