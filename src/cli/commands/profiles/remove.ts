import { defineCommand } from '../../registry.js';
import { editProfiles, profileArg, requireProfile } from './shared.js';

export const remove = defineCommand({
  name: 'remove',
  aliases: ['rm'],
  description: 'delete a saved profile',
  args: [profileArg],
  async handler({ args }, ctx) {
    const name = args.name;
    await editProfiles(ctx, (config) => {
      requireProfile(config, name);
      delete config.profiles[name];
      if (config.current === name) delete config.current;
    });
    await ctx.output.result({ name, removed: true }, () => ctx.output.line(`Removed profile ${name}.`));
  },
});
