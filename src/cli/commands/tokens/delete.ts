import { DECLINED, confirm, mustAsk, yesOption } from '../../io/confirm.js';
import { defineCommand } from '../../registry.js';
import { tokenArg, transactionOption } from './shared.js';

export const remove = defineCommand({
  name: 'delete',
  aliases: ['rm'],
  description: 'delete a token',
  args: [tokenArg],
  options: [transactionOption, yesOption],
  async handler({ args, options }, ctx) {
    const staged = options.transaction ? ` (staged in transaction ${options.transaction})` : '';
    const ask = mustAsk(ctx, options.yes, `deleting token "${args.id}"`);
    if (ask && !(await confirm(ctx, `Delete token "${args.id}"${staged}?`))) return DECLINED;
    const client = await ctx.client();
    await client.tokens.delete(args.id, options.transaction);
    await ctx.output.result({ id: args.id, deleted: true }, () =>
      ctx.output.line(`Deleted token ${args.id}${staged}.`),
    );
  },
});
