import { defineCommand } from '../../registry.js';
import { showTransaction } from './shared.js';

export const create = defineCommand({
  name: 'create',
  description: 'open a transaction (Enterprise tier); pass its id to token writes with --transaction',
  async handler(_input, ctx) {
    const transaction = await (await ctx.client()).transactions.create();
    await ctx.output.result(transaction, () => showTransaction(ctx.output, transaction));
  },
});
