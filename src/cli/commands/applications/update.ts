import { UsageError } from '../../io/errors.js';
import { defineCommand } from '../../registry.js';
import { updateApplicationBody } from '../../../requests/applications.js';
import { resolveApplicationId } from '../../../requests/lookup.js';
import { applicationArg, readRules, showApplication } from './shared.js';
import { DECLINED, confirmWrite, yesOption } from '../../io/confirm.js';

export const update = defineCommand({
  name: 'update',
  description: 'update an Application; permissions and rules given replace the current ones',
  args: [applicationArg],
  options: [
    { flags: '--name <name>', description: 'new name' },
    { flags: '--permission <permission>', description: 'permission (repeatable; replaces all)', repeatable: true },
    {
      flags: '--rule <json>',
      description: 'access rule: JSON, @file or - (stdin); one rule or an array (repeatable; replaces all)',
      repeatable: true,
    },
    yesOption,
  ],
  async handler({ args, options }, ctx) {
    if (options.name === undefined && options.permission === undefined && options.rule === undefined) {
      throw new UsageError('Nothing to update: pass --name, --permission or --rule.');
    }
    const rules = await readRules(options.rule, ctx.io);
    if (!(await confirmWrite(ctx, options.yes, `updating Application "${args.application}"`))) return DECLINED;
    const client = await ctx.client();
    const id = await resolveApplicationId(client, args.application);
    // Only the name must be sent again (the API keeps what is left out): read it only when not given.
    const current = options.name === undefined ? await client.applications.get(id) : { name: options.name };
    const body = updateApplicationBody(current, { name: options.name, permissions: options.permission, rules });
    const app = await client.applications.update(id, body);
    await ctx.output.result(app, () => showApplication(ctx.output, app));
  },
});
