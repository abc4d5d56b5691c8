import { defineCommand } from '../../registry.js';
import { showToken, tokenArg, transactionOption } from './shared.js';

export const get = defineCommand({
  name: 'get',
  description: 'show a token (data as your access allows: revealed, masked or redacted)',
  args: [tokenArg],
  options: [transactionOption],
  async handler({ args, options }, ctx) {
    const client = await ctx.client();
    const token = await client.tokens.get(args.id, options.transaction);
    await ctx.output.result(token, () => showToken(ctx.output, token));
  },
});
