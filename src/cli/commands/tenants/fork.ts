import type { TenantSummary } from '../../../client/index.js';
import { UserError } from '../../io/errors.js';
import { defineCommand } from '../../registry.js';
import { notAnEmulator, requireEmulator } from './shared.js';

export const fork = defineCommand({
  name: 'fork',
  description:
    "fork a tenant of the emulator: a new one with copies of its Applications (new keys), reactors and proxies, none of its tokens; prints the keys once (the template's management key)",
  args: [{ name: 'name', description: 'the fork name' }],
  options: [
    {
      flags: '--from <tenant>',
      description: 'the tenant to fork, by id or name (default: the one svc serve bootstrapped); its management key',
    },
  ],
  examples: [
    'svc tenants fork test-1',
    'svc tenants fork test-1 --from acme --management-key "$ACME_MANAGEMENT_KEY"',
    'svc tenants fork test-1 --json | jq -r .management_key',
  ],
  async handler({ args, options }, ctx) {
    const client = await ctx.client();
    requireEmulator(client.baseUrl);
    const tenants = await client.tenants().catch((error: unknown) => {
      throw notAnEmulator(error, client.baseUrl);
    });
    const template = templateOf(tenants, options.from as string | undefined);
    const forked = await client.forkTenant(template.id, { name: args.name });
    await ctx.output.result(forked, async () => {
      await ctx.output.fields([
        ['id', forked.id],
        ['name', forked.name],
        ['forked from', `${template.id} (${template.name})`],
        ['management key', forked.management_key],
        ['private key', forked.private_key],
      ]);
      const keys = [
        ...forked.applications.map((app) => ({ kind: `application (${app.type})`, name: app.name, key: app.key })),
        ...forked.proxies.map((proxy) => ({ kind: 'proxy', name: proxy.name, key: proxy.key })),
      ];
      ctx.output.table(
        keys,
        [
          { header: 'COPIED', value: (row) => row.kind },
          { header: 'NAME', value: (row) => row.name },
          { header: 'KEY', value: (row) => row.key },
        ],
        'Nothing copied.',
      );
      ctx.output.note(
        `These keys are shown once. ${forked.reactors.length} reactor(s) copied; delete the fork with DELETE /_emulator/tenants/${forked.id} and its management key.`,
      );
    });
  },
});

/** The tenant `--from` names (an id, else a name held by one tenant only), or the bootstrapped one. */
function templateOf(tenants: readonly TenantSummary[], from: string | undefined): TenantSummary {
  if (from === undefined) {
    const bootstrapped = tenants.find((tenant) => tenant.bootstrap);
    if (!bootstrapped) throw new UserError('The emulator has no tenant to fork; pass --from TENANT.');
    return bootstrapped;
  }
  const byId = tenants.find((tenant) => tenant.id === from);
  if (byId) return byId;
  const named = tenants.filter((tenant) => tenant.name === from);
  if (named.length === 1 && named[0]) return named[0];
  if (named.length > 1) {
    throw new UserError(
      `${named.length} tenants are named "${from}" (${named.map((tenant) => tenant.id).join(', ')}): pass --from with an id.`,
    );
  }
  throw new UserError(`No tenant "${from}" (by id or name): svc tenants list shows them.`);
}
