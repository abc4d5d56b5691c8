import { defineCommand } from '../../registry.js';
import { showApplication } from './shared.js';

export const whoami = defineCommand({
  name: 'whoami',
  description: 'show the Application that owns the management key in use (GET /applications/key)',
  async handler(_input, ctx) {
    const client = await ctx.client();
    const app = await client.applications.self();
    await ctx.output.result(app, () => showApplication(ctx.output, app));
  },
});
