import { defineCommand } from '../../registry.js';
import { showTransaction, transactionArg } from './shared.js';

export const get = defineCommand({
  name: 'get',
  description: 'show a transaction and its status',
  args: [transactionArg],
  async handler({ args }, ctx) {
    const transaction = await (await ctx.client()).transactions.get(args.id);
    await ctx.output.result(transaction, () => showTransaction(ctx.output, transaction));
  },
});
