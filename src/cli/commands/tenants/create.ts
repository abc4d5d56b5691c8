import { UsageError, UserError } from '../../io/errors.js';
import { PROFILE_NAME, profilesFilePath, readProfilesFile } from '../../target/profiles-file.js';
import { defineCommand } from '../../registry.js';
import { editProfiles } from '../profiles/shared.js';
import { notAnEmulator, requireEmulator } from './shared.js';

export const create = defineCommand({
  name: 'create',
  description:
    'create a tenant of the emulator with its own management and private Applications; prints their keys once',
  args: [{ name: 'name', description: 'the tenant name' }],
  options: [
    {
      flags: '--save-profile <profile>',
      description: 'save the emulator URL and the new keys as this profile (a new one), to use with --profile',
    },
  ],
  examples: [
    'svc tenants create acme',
    'svc tenants create acme --save-profile acme && svc applications list --profile acme',
    'svc tenants create acme --json | jq -r .management_key',
  ],
  async handler({ args, options }, ctx) {
    const profile = options.saveProfile as string | undefined;
    if (profile !== undefined) {
      if (!PROFILE_NAME.test(profile))
        throw new UsageError('--save-profile takes 1 to 64 letters, digits, "-" or "_".');
      // Checked before the tenant is made: a profile's keys are never replaced by another tenant's.
      if ((await readProfilesFile(profilesFilePath(ctx.io.env))).profiles[profile] !== undefined)
        throw new UserError(`A profile named "${profile}" exists already; choose another --save-profile name.`);
    }
    const client = await ctx.client();
    requireEmulator(client.baseUrl);
    const tenant = await client.createTenant({ name: args.name }).catch((error: unknown) => {
      throw notAnEmulator(error, client.baseUrl);
    });
    if (profile !== undefined) {
      await editProfiles(ctx, (config) => {
        config.profiles[profile] = {
          base_url: client.baseUrl,
          management_key: tenant.management_key,
          api_key: tenant.private_key,
        };
      });
    }
    await ctx.output.result({ ...tenant, ...(profile !== undefined && { profile }) }, async () => {
      await ctx.output.fields([
        ['id', tenant.id],
        ['name', tenant.name],
        ['management key', tenant.management_key],
        ['private key', tenant.private_key],
      ]);
      ctx.output.note(
        profile !== undefined
          ? `Saved as profile ${profile}: svc applications list --profile ${profile}`
          : 'These keys are shown once: save them (or pass --save-profile NAME next time).',
      );
    });
  },
});
