import { defineCommand } from '../../registry.js';
import { tokenArg, transactionOption } from './shared.js';

export const remove = defineCommand({
  name: 'delete',
  aliases: ['rm'],
  description: 'delete a token',
  args: [tokenArg],
  options: [transactionOption],
  async handler({ args, options }, ctx) {
    const client = await ctx.client();
    await client.tokens.delete(args.id, options.transaction);
    const staged = options.transaction ? ` (staged in transaction ${options.transaction})` : '';
    await ctx.output.result({ id: args.id, deleted: true }, () => ctx.output.line(`Deleted token ${args.id}${staged}.`));
  },
});
