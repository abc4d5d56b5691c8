import { resolveProxyId } from '../../../resources/lookup.js';
import { defineCommand } from '../../registry.js';
import { proxyArg } from './shared.js';

export const remove = defineCommand({
  name: 'delete',
  aliases: ['rm'],
  description: 'delete a proxy (its key stops working at once)',
  args: [proxyArg],
  async handler({ args }, ctx) {
    const client = await ctx.client();
    const id = await resolveProxyId(client, args.proxy);
    await client.proxies.delete(id);
    await ctx.output.result({ id, deleted: true }, () => ctx.output.line(`Deleted proxy ${id}.`));
  },
});
