import type { Context } from '../../context.js';
import { UsageError } from '../../io/errors.js';
import { defineCommand } from '../../registry.js';
import { editProfiles, requireProfile } from './shared.js';

export const use = defineCommand({
  name: 'use',
  description:
    'make a profile the current one (used where no flag, env or folder of `svc serve` names a target); --none clears it',
  args: [{ name: 'name', description: 'profile name', optional: true }],
  options: [{ flags: '--none', description: 'clear the current profile (as `svc profiles unset` does)' }],
  examples: ['svc profiles use staging', 'svc profiles use --none'],
  async handler({ args, options }, ctx) {
    const name = args.name;
    if (options.none) {
      if (name !== undefined) throw new UsageError(`--none clears the current profile; it takes no name ("${name}").`);
      return clearCurrent(ctx);
    }
    if (name === undefined) throw new UsageError('Name the profile to use, or pass --none to clear the current one.');
    await editProfiles(ctx, (config) => {
      // `use none` reads as clearing it: the refusal says how that is done.
      const hint = /^(none|off|null|unset|nothing)$/i.test(name)
        ? '; `svc profiles use --none` clears the current profile'
        : '';
      requireProfile(config, name, hint);
      config.current = name;
    });
    await ctx.output.result({ name, current: true }, () => ctx.output.line(`Now using profile ${name}.`));
  },
});

/** `svc profiles unset`: the same as `use --none`. */
export const unset = defineCommand({
  name: 'unset',
  description: 'clear the current profile (commands then go to the folder of `svc serve` or the default local URL)',
  async handler(_input, ctx) {
    return clearCurrent(ctx);
  },
});

async function clearCurrent(ctx: Context): Promise<void> {
  let previous: string | undefined;
  await editProfiles(ctx, (config) => {
    previous = config.current;
    delete config.current;
  });
  await ctx.output.result({ name: null, current: false, previous: previous ?? null }, () =>
    ctx.output.line(
      previous === undefined ? 'No current profile (none was set).' : `No current profile (was ${previous}).`,
    ),
  );
}
