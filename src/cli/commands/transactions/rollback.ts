import { DECLINED, confirm, mustAsk, yesOption } from '../../io/confirm.js';
import { defineCommand } from '../../registry.js';
import { transactionArg } from './shared.js';

export const rollback = defineCommand({
  name: 'rollback',
  description: 'discard every token write staged in an open transaction',
  args: [transactionArg],
  options: [yesOption],
  async handler({ args, options }, ctx) {
    const question = `Roll back transaction ${args.id}? Every token write staged in it is discarded.`;
    const ask = mustAsk(ctx, options.yes, `rolling back transaction ${args.id}`);
    if (ask && !(await confirm(ctx, question))) return DECLINED;
    await (await ctx.client()).transactions.rollback(args.id);
    await ctx.output.result({ id: args.id, status: 'rolled_back' }, () =>
      ctx.output.line(`Rolled back transaction ${args.id}.`),
    );
  },
});
