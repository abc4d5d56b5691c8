import { resolveReactorId } from '../../../resources/lookup.js';
import { defineCommand } from '../../registry.js';
import { reactorArg } from './shared.js';

export const remove = defineCommand({
  name: 'delete',
  aliases: ['rm'],
  description: 'delete a reactor',
  args: [reactorArg],
  async handler({ args }, ctx) {
    const client = await ctx.client();
    const id = await resolveReactorId(client, args.reactor);
    await client.reactors.delete(id);
    await ctx.output.result({ id, deleted: true }, () => ctx.output.line(`Deleted reactor ${id}.`));
  },
});
