import { isUuid } from '../../../api/patterns.js';
import { resolveProxyId } from '../../../requests/lookup.js';
import { DECLINED, announceTarget, confirm, mustAsk, yesOption } from '../../io/confirm.js';
import { defineCommand } from '../../registry.js';
import { proxyArg } from './shared.js';

export const remove = defineCommand({
  name: 'delete',
  aliases: ['rm'],
  description: 'delete a proxy (its key stops working at once)',
  args: [proxyArg],
  options: [yesOption],
  async handler({ args, options }, ctx) {
    const ask = mustAsk(ctx, options.yes, `deleting proxy "${args.proxy}"`);
    await announceTarget(ctx);
    const client = await ctx.client();
    const id = await resolveProxyId(client, args.proxy);
    if (ask) {
      const name = isUuid(args.proxy) ? (await client.proxies.get(id)).name : args.proxy;
      if (!(await confirm(ctx, `Delete proxy "${name}" (${id})? Its key stops working at once.`))) return DECLINED;
    }
    await client.proxies.delete(id);
    await ctx.output.result({ id, deleted: true }, () => ctx.output.line(`Deleted proxy ${id}.`));
  },
});
