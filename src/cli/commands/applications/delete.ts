import { defineCommand } from '../../registry.js';
import { resolveApplicationId } from '../../../resources/lookup.js';
import { applicationArg } from './shared.js';

export const remove = defineCommand({
  name: 'delete',
  aliases: ['rm'],
  description: 'delete an Application (its key stops working at once)',
  args: [applicationArg],
  async handler({ args }, ctx) {
    const client = await ctx.client();
    const id = await resolveApplicationId(client, args.application);
    await client.applications.delete(id);
    await ctx.output.result({ id, deleted: true }, () => ctx.output.line(`Deleted Application ${id}.`));
  },
});
