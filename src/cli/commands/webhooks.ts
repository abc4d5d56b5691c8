import { defineCommand, type CommandGroup } from '../registry.js';

const secret = defineCommand({
  name: 'secret',
  description: 'print the secret that signs asynchronous reactor webhooks (SVC-SIGNATURE); management key',
  async handler(_input, ctx) {
    const value = await (await ctx.client()).webhookSecret();
    await ctx.output.result({ secret: value }, () => ctx.output.line(value));
  },
});

export const webhooks: CommandGroup = {
  name: 'webhooks',
  description: 'webhooks of asynchronous reactor invocations',
  commands: [secret],
};
