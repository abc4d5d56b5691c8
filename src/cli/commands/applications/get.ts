import { defineCommand } from '../../registry.js';
import { resolveApplicationId } from '../../../requests/lookup.js';
import { applicationArg, showApplication } from './shared.js';

export const get = defineCommand({
  name: 'get',
  description: 'show an Application',
  args: [applicationArg],
  async handler({ args }, ctx) {
    const client = await ctx.client();
    const app = await client.applications.get(await resolveApplicationId(client, args.application));
    await ctx.output.result(app, () => showApplication(ctx.output, app));
  },
});
