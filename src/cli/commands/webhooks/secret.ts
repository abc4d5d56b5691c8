import { defineCommand } from '../../registry.js';

export const secret = defineCommand({
  name: 'secret',
  description: 'print the secret that signs asynchronous reactor webhooks (SVC-SIGNATURE); management key',
  async handler(_input, ctx) {
    const value = await (await ctx.client()).webhookSecret();
    await ctx.output.result({ secret: value }, () => ctx.output.line(value));
  },
});
