import { DECLINED, confirm, mustAsk, yesOption } from '../../io/confirm.js';
import { profilesFilePath, readProfilesFile } from '../../target/profiles-file.js';
import { defineCommand } from '../../registry.js';
import { editProfiles, profileArg, requireProfile } from './shared.js';

export const remove = defineCommand({
  name: 'remove',
  aliases: ['rm'],
  description: 'delete a saved profile (and the keys it holds)',
  args: [profileArg],
  options: [yesOption],
  async handler({ args, options }, ctx) {
    const name = args.name;
    if (mustAsk(ctx, options.yes, `removing profile "${name}"`)) {
      // Asked only about a profile that exists.
      requireProfile(await readProfilesFile(profilesFilePath(ctx.io.env)), name);
      if (!(await confirm(ctx, `Remove profile "${name}" and the keys it holds?`))) return DECLINED;
    }
    await editProfiles(ctx, (config) => {
      requireProfile(config, name);
      delete config.profiles[name];
      if (config.current === name) delete config.current;
    });
    await ctx.output.result({ name, removed: true }, () => ctx.output.line(`Removed profile ${name}.`));
  },
});
