import { UsageError } from '../../errors.js';
import { defineCommand } from '../../registry.js';
import { parseRules, updateApplicationBody } from '../../../resources/applications.js';
import { resolveApplicationId } from '../../../resources/lookup.js';
import { applicationArg, showApplication } from './shared.js';

export const update = defineCommand({
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
    const id = await resolveApplicationId(client, args.application);
    const rules = options.rule && parseRules(options.rule, '--rule');
    // Only the name must be sent again (the API keeps what is left out): read it only when not given.
    const current = options.name === undefined ? await client.applications.get(id) : { name: options.name };
    const body = updateApplicationBody(current, { name: options.name, permissions: options.permission, rules });
    const app = await client.applications.update(id, body);
    await ctx.output.result(app, () => showApplication(ctx.output, app));
  },
});
