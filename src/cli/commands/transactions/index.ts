import type { Transaction } from '../../../api/types.js';
import type { Output } from '../../output.js';
import { defineCommand, type CommandGroup } from '../../registry.js';

const transactionArg = { name: 'id', description: 'transaction id' };

async function showTransaction(output: Output, transaction: Transaction): Promise<void> {
  await output.fields([
    ['id', transaction.id],
    ['status', transaction.status],
    ['created', transaction.created_at],
    ['expires', transaction.expires_at],
  ]);
}

const create = defineCommand({
  name: 'create',
  description: 'open a transaction (Enterprise tier); pass its id to token writes with --transaction',
  async handler(_input, ctx) {
    const transaction = await (await ctx.client()).transactions.create();
    await ctx.output.result(transaction, () => showTransaction(ctx.output, transaction));
  },
});

const get = defineCommand({
  name: 'get',
  description: 'show a transaction and its status',
  args: [transactionArg],
  async handler({ args }, ctx) {
    const transaction = await (await ctx.client()).transactions.get(args.id!);
    await ctx.output.result(transaction, () => showTransaction(ctx.output, transaction));
  },
});

const commit = defineCommand({
  name: 'commit',
  description: 'apply every token write staged in an open transaction',
  args: [transactionArg],
  async handler({ args }, ctx) {
    await (await ctx.client()).transactions.commit(args.id!);
    await ctx.output.result({ id: args.id, status: 'committed' }, () => ctx.output.line(`Committed transaction ${args.id}.`));
  },
});

const rollback = defineCommand({
  name: 'rollback',
  description: 'discard every token write staged in an open transaction',
  args: [transactionArg],
  async handler({ args }, ctx) {
    await (await ctx.client()).transactions.rollback(args.id!);
    await ctx.output.result({ id: args.id, status: 'rolled_back' }, () => ctx.output.line(`Rolled back transaction ${args.id}.`));
  },
});

export const transactions: CommandGroup = {
  name: 'transactions',
  description: 'group token writes: create, commit, rollback (Enterprise tier)',
  commands: [create, get, commit, rollback],
};
