import { isUuid } from '../../../api/patterns.js';
import { resolveReactorId } from '../../../requests/lookup.js';
import { DECLINED, announceTarget, confirm, mustAsk, yesOption } from '../../io/confirm.js';
import { defineCommand } from '../../registry.js';
import { reactorArg } from './shared.js';

export const remove = defineCommand({
  name: 'delete',
  aliases: ['rm'],
  description: 'delete a reactor',
  args: [reactorArg],
  options: [yesOption],
  async handler({ args, options }, ctx) {
    const ask = mustAsk(ctx, options.yes, `deleting reactor "${args.reactor}"`);
    await announceTarget(ctx);
    const client = await ctx.client();
    const id = await resolveReactorId(client, args.reactor);
    if (ask) {
      const name = isUuid(args.reactor) ? (await client.reactors.get(id)).name : args.reactor;
      if (!(await confirm(ctx, `Delete reactor "${name}" (${id})?`))) return DECLINED;
    }
    await client.reactors.delete(id);
    await ctx.output.result({ id, deleted: true }, () => ctx.output.line(`Deleted reactor ${id}.`));
  },
});
