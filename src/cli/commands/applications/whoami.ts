import { defineCommand } from '../../registry.js';
import { showApplication } from './shared.js';

export const whoami = defineCommand<{ api?: boolean }>({
  name: 'whoami',
  description: 'show the Application that owns the key in use (GET /applications/key)',
  options: [{ flags: '--api', description: 'ask about the API key instead of the management key' }],
  async handler({ options }, ctx) {
    const client = await ctx.client();
    const app = await client.applications.self(options.api ? 'api' : 'management');
    await ctx.output.result(app, () => showApplication(ctx.output, app));
  },
});
