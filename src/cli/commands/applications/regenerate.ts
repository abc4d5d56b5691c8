import { defineCommand } from '../../registry.js';
import { resolveApplicationId } from '../../../resources/lookup.js';
import { applicationArg, showApplication } from './shared.js';

export const regenerate = defineCommand({
  name: 'regenerate',
  description: 'issue a new key for an Application; the old key stops working at once',
  args: [applicationArg],
  async handler({ args }, ctx) {
    const client = await ctx.client();
    const app = await client.applications.regenerate(await resolveApplicationId(client, args.application));
    await ctx.output.result(app, () => showApplication(ctx.output, app));
  },
});
