import { resolveProxyId } from '../../../requests/lookup.js';
import { defineCommand } from '../../registry.js';
import { proxyArg, showProxy } from './shared.js';

export const get = defineCommand({
  name: 'get',
  description: 'show a proxy (with its key)',
  args: [proxyArg],
  async handler({ args }, ctx) {
    const client = await ctx.client();
    const proxy = await client.proxies.get(await resolveProxyId(client, args.proxy));
    await ctx.output.result(proxy, () => showProxy(ctx.output, proxy));
  },
});
