import { defineCommand } from '../../registry.js';
import { notAnEmulator, requireEmulator } from './shared.js';

export const list = defineCommand({
  name: 'list',
  description: "the emulator's tenants: id, name, when created (never a key; loopback only)",
  examples: ['svc tenants list', 'svc tenants list --json | jq -r ".[].id"'],
  async handler(_input, ctx) {
    const client = await ctx.client();
    requireEmulator(client.baseUrl);
    const tenants = await client.tenants().catch((error: unknown) => {
      throw notAnEmulator(error, client.baseUrl);
    });
    await ctx.output.result(tenants, () =>
      ctx.output.table(
        tenants,
        [
          { header: 'ID', value: (tenant) => tenant.id },
          { header: 'NAME', value: (tenant) => tenant.name },
          { header: 'CREATED', value: (tenant) => tenant.created_at },
          { header: 'SERVE', value: (tenant) => (tenant.bootstrap ? 'yes' : '') },
        ],
        'No tenants.',
      ),
    );
  },
});
