import { defineCommand } from '../../registry.js';
import { transactionArg } from './shared.js';

export const commit = defineCommand({
  name: 'commit',
  description: 'apply every token write staged in an open transaction',
  args: [transactionArg],
  async handler({ args }, ctx) {
    await (await ctx.client()).transactions.commit(args.id);
    await ctx.output.result({ id: args.id, status: 'committed' }, () =>
      ctx.output.line(`Committed transaction ${args.id}.`),
    );
  },
});
