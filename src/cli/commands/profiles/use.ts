import { defineCommand } from '../../registry.js';
import { editProfiles, profileArg, requireProfile } from './shared.js';

export const use = defineCommand({
  name: 'use',
  description: 'make a profile the current one',
  args: [profileArg],
  async handler({ args }, ctx) {
    const name = args.name;
    await editProfiles(ctx, (config) => {
      requireProfile(config, name);
      config.current = name;
    });
    await ctx.output.result({ name, current: true }, () => ctx.output.line(`Now using profile ${name}.`));
  },
});
