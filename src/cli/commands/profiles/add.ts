import { PROFILE_NAME, type Profile } from '../../target/profiles-file.js';
import { askHidden, canPrompt } from '../../io/prompt.js';
import { checkBaseUrl } from '../../target/resolve.js';
import { UsageError } from '../../io/errors.js';
import { defineCommand } from '../../registry.js';
import { editProfiles, profileArg } from './shared.js';

export const add = defineCommand({
  name: 'add',
  description:
    'save a profile from --base-url, --management-key and --api-key (adding to one that exists); ' +
    'on a terminal, asks for the keys (hidden) when neither is given; a key given as - is read from stdin',
  args: [profileArg],
  options: [{ flags: '--use', description: 'make it the current profile' }],
  examples: [
    'svc profiles add staging --base-url https://api.staging.example.com --use     # asks for the keys',
    'svc profiles add ci --base-url https://api.example.com --management-key - < mgmt-key.txt',
  ],
  async handler({ args, options }, ctx) {
    const name = args.name;
    if (!PROFILE_NAME.test(name)) throw new UsageError('A profile name is 1 to 64 letters, digits, "-" or "_".');
    // Checked before any question, so that a typo in the URL does not cost typing the keys.
    const baseUrl = ctx.globals.baseUrl === undefined ? undefined : checkBaseUrl(ctx.globals.baseUrl);
    let { managementKey, apiKey } = await ctx.flags();
    if (managementKey === undefined && apiKey === undefined && canPrompt(ctx.io)) {
      // Typed, not passed: the keys stay out of argv and shell history. Enter alone skips one.
      managementKey = (await askHidden(ctx.io, 'Management key (Enter to skip): ')) || undefined;
      apiKey = (await askHidden(ctx.io, 'API key (Enter to skip): ')) || undefined;
    }
    if (baseUrl === undefined && managementKey === undefined && apiKey === undefined) {
      throw new UsageError('Give the profile something to hold: --base-url, --management-key and/or --api-key.');
    }
    const update: Profile = {
      ...(baseUrl !== undefined && { base_url: baseUrl }),
      ...(managementKey !== undefined && { management_key: managementKey }),
      ...(apiKey !== undefined && { api_key: apiKey }),
    };
    const config = await editProfiles(ctx, (config) => {
      config.profiles[name] = { ...config.profiles[name], ...update };
      if (options.use) config.current = name;
    });
    const current = config.current === name;
    await ctx.output.result({ name, current }, () =>
      ctx.output.line(
        `Saved profile ${name}${current ? ' (current)' : `; use it with --profile ${name} or \`svc profiles use ${name}\``}.`,
      ),
    );
  },
});
