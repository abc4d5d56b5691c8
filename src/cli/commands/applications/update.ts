import { UsageError } from '../../errors.js';
import { defineCommand } from '../../registry.js';
import { applicationArg, parseRules, resolveApplicationId, showApplication } from './shared.js';

interface UpdateOptions {
  name?: string;
  permission?: string[];
  rule?: string[];
}

export const update = defineCommand<UpdateOptions>({
  name: 'update',
  description: 'update an Application; permissions and rules given replace the current ones',
  args: [applicationArg],
  options: [
    { flags: '--name <name>', description: 'new name' },
    { flags: '--permission <permission>', description: 'permission (repeatable; replaces all)', repeatable: true },
    { flags: '--rule <json>', description: 'access rule as JSON (repeatable; replaces all)', repeatable: true },
  ],
  async handler({ args, options }, ctx) {
    if (options.name === undefined && options.permission === undefined && options.rule === undefined) {
      throw new UsageError('Nothing to update: pass --name, --permission or --rule.');
    }
    const client = await ctx.client();
    const id = await resolveApplicationId(client, args.application!);
    const rules = parseRules(options.rule);
    // The API requires the name on update; keep the current one when none is given.
    const name = options.name ?? (await client.applications.get(id)).name;
    const app = await client.applications.update(id, {
      name,
      ...(options.permission && { permissions: options.permission }),
      ...(rules && { rules }),
    });
    await ctx.output.result(app, () => showApplication(ctx.output, app));
  },
});
