import { defineCommand } from '../../registry.js';
import { transactionArg } from './shared.js';

export const rollback = defineCommand({
  name: 'rollback',
  description: 'discard every token write staged in an open transaction',
  args: [transactionArg],
  async handler({ args }, ctx) {
    await (await ctx.client()).transactions.rollback(args.id);
    await ctx.output.result({ id: args.id, status: 'rolled_back' }, () => ctx.output.line(`Rolled back transaction ${args.id}.`));
  },
});
