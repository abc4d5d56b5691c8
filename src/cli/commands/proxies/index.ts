import { MAX_NAME_LENGTH } from '../../../api/limits.js';
import type { Proxy, ProxyBody } from '../../../api/types.js';
import type { ApiClient } from '../../../client/index.js';
import { UsageError } from '../../errors.js';
import { intOption } from '../../input.js';
import type { Output } from '../../output.js';
import { defineCommand, type CommandGroup } from '../../registry.js';
import { resolveByName } from '../../resolve.js';
import { applicationRef, readCode, readConfiguration } from '../reactors/shared.js';
import { notePages, pagingOptions } from '../paging.js';

export const proxyArg = { name: 'proxy', description: 'proxy id or exact name' };

export function resolveProxyId(client: ApiClient, idOrName: string): Promise<string> {
  return resolveByName(idOrName, () => client.proxies.all(), 'proxy', 'svc proxies list');
}

interface ProxyFlags {
  name?: string;
  destinationUrl?: string;
  requestTransform?: string | false;
  responseTransform?: string | false;
  configuration?: string[];
  application?: string | false;
  requireAuth?: boolean;
}

const proxyOptions = [
  { flags: '--name <name>', description: `name (up to ${MAX_NAME_LENGTH} characters)` },
  { flags: '--destination-url <url>', description: 'where requests are forwarded (absolute http/https URL)' },
  { flags: '--request-transform <file>', description: 'code run on each request before it is forwarded' },
  { flags: '--response-transform <file>', description: "code run on the destination's response" },
  { flags: '--configuration <pair>', description: 'KEY=VALUE, or @file.env (repeatable)', repeatable: true },
  { flags: '--application <application>', description: 'Application (id or name) for the transforms and anonymous detokenization' },
  { flags: '--require-auth', description: 'callers must send an API key with token:use (the default)' },
  { flags: '--no-require-auth', description: 'accept anonymous callers' },
];

async function transformOf(value: string | false | undefined, ctx: { io: Parameters<typeof readCode>[1] }) {
  if (value === undefined) return undefined;
  if (value === false) return null;
  return { code: await readCode(value, ctx.io) };
}

async function showProxy(output: Output, proxy: Proxy): Promise<void> {
  await output.fields([
    ['id', proxy.id],
    ['name', proxy.name],
    ['key', proxy.key],
    ['destination', proxy.destination_url],
    ['require auth', String(proxy.require_auth)],
    ['transforms', [proxy.request_transform && 'request', proxy.response_transform && 'response'].filter(Boolean).join(', ') || '(none)'],
    ['application', proxy.application_id ?? '(none)'],
    ['configuration', Object.keys(proxy.configuration ?? {}).join(', ') || '(none)'],
    ['modified', proxy.modified_at],
  ]);
}

const list = defineCommand<{ page?: string; size?: string; name?: string }>({
  name: 'list',
  aliases: ['ls'],
  description: 'list proxies',
  options: [
    { flags: '--name <pattern>', description: 'only names matching (* is a wildcard)' },
    ...pagingOptions,
  ],
  async handler({ options }, ctx) {
    const page = await (await ctx.client()).proxies.list({ name: options.name, page: intOption(options.page, '--page'), size: intOption(options.size, '--size') });
    await ctx.output.result(page, async () => {
      await ctx.output.table(
        page.data,
        [
          { header: 'ID', value: (proxy) => proxy.id },
          { header: 'NAME', value: (proxy) => proxy.name },
          { header: 'DESTINATION', value: (proxy) => proxy.destination_url },
          { header: 'AUTH', value: (proxy) => (proxy.require_auth ? 'required' : 'anonymous') },
          { header: 'TRANSFORMS', value: (proxy) => [proxy.request_transform && 'request', proxy.response_transform && 'response'].filter(Boolean).join(',') || '-' },
        ],
        'No proxies.',
      );
      notePages(ctx.output, page.pagination, 'proxies');
    });
  },
});

const get = defineCommand({
  name: 'get',
  description: 'show a proxy (with its key)',
  args: [proxyArg],
  async handler({ args }, ctx) {
    const client = await ctx.client();
    const proxy = await client.proxies.get(await resolveProxyId(client, args.proxy!));
    await ctx.output.result(proxy, () => showProxy(ctx.output, proxy));
  },
});

const create = defineCommand<ProxyFlags>({
  name: 'create',
  description: 'create a proxy (transforms are checked to load)',
  options: proxyOptions,
  examples: ['svc proxies create --name stripe --destination-url https://api.stripe.com --request-transform transforms/sign.js'],
  async handler({ options }, ctx) {
    if (options.name === undefined || options.destinationUrl === undefined) throw new UsageError('A proxy needs --name and --destination-url.');
    const client = await ctx.client();
    const application = typeof options.application === 'string' ? await applicationRef(client, options.application) : undefined;
    const body: ProxyBody = {
      name: options.name,
      destination_url: options.destinationUrl,
      ...(options.requestTransform && { request_transform: await transformOf(options.requestTransform, ctx) }),
      ...(options.responseTransform && { response_transform: await transformOf(options.responseTransform, ctx) }),
      ...(options.configuration && { configuration: (await readConfiguration(options.configuration, ctx.io))! }),
      ...(application && { application }),
      ...(options.requireAuth !== undefined && { require_auth: options.requireAuth }),
    };
    const proxy = await client.proxies.create(body);
    await ctx.output.result(proxy, () => showProxy(ctx.output, proxy));
  },
});

const noTransforms = [
  { flags: '--no-request-transform', description: 'remove the request transform' },
  { flags: '--no-response-transform', description: 'remove the response transform' },
  { flags: '--no-application', description: 'unbind the Application' },
];

const update = defineCommand<ProxyFlags>({
  name: 'update',
  description: 'replace a proxy (PUT); fields not given keep their current values',
  args: [proxyArg],
  options: [...proxyOptions, ...noTransforms],
  async handler({ args, options }, ctx) {
    const client = await ctx.client();
    const id = await resolveProxyId(client, args.proxy!);
    const current = await client.proxies.get(id);
    const application =
      options.application === false ? null : typeof options.application === 'string' ? await applicationRef(client, options.application) : current.application_id ? { id: current.application_id } : null;
    const requestTransform = await transformOf(options.requestTransform, ctx);
    const responseTransform = await transformOf(options.responseTransform, ctx);
    const proxy = await client.proxies.update(id, {
      name: options.name ?? current.name,
      destination_url: options.destinationUrl ?? current.destination_url,
      request_transform: requestTransform === undefined ? current.request_transform : requestTransform,
      response_transform: responseTransform === undefined ? current.response_transform : responseTransform,
      application: application ?? null,
      configuration: (await readConfiguration(options.configuration, ctx.io)) ?? current.configuration,
      require_auth: options.requireAuth ?? current.require_auth,
    });
    await ctx.output.result(proxy, () => showProxy(ctx.output, proxy));
  },
});

const patch = defineCommand<ProxyFlags & { unset?: string[] }>({
  name: 'patch',
  description: 'change some fields of a proxy (JSON merge patch); --configuration pairs merge into the current ones',
  args: [proxyArg],
  options: [...proxyOptions, ...noTransforms, { flags: '--unset <key>', description: 'remove a configuration key (repeatable)', repeatable: true }],
  async handler({ args, options }, ctx) {
    const client = await ctx.client();
    const id = await resolveProxyId(client, args.proxy!);
    const configuration: Record<string, string | null> = { ...(await readConfiguration(options.configuration, ctx.io)) };
    for (const key of options.unset ?? []) configuration[key] = null;
    const requestTransform = await transformOf(options.requestTransform, ctx);
    const responseTransform = await transformOf(options.responseTransform, ctx);
    const patch: Record<string, unknown> = {
      ...(options.name !== undefined && { name: options.name }),
      ...(options.destinationUrl !== undefined && { destination_url: options.destinationUrl }),
      ...(requestTransform !== undefined && { request_transform: requestTransform }),
      ...(responseTransform !== undefined && { response_transform: responseTransform }),
      ...(Object.keys(configuration).length > 0 && { configuration }),
      ...(options.application === false ? { application: null } : typeof options.application === 'string' ? { application: await applicationRef(client, options.application) } : {}),
      ...(options.requireAuth !== undefined && { require_auth: options.requireAuth }),
    };
    if (Object.keys(patch).length === 0) throw new UsageError('Nothing to change: pass a field to change (see --help).');
    await client.proxies.patch(id, patch);
    await ctx.output.result({ id, patched: Object.keys(patch) }, () => ctx.output.line(`Patched proxy ${id} (${Object.keys(patch).join(', ')}).`));
  },
});

const remove = defineCommand({
  name: 'delete',
  aliases: ['rm'],
  description: 'delete a proxy (its key stops working at once)',
  args: [proxyArg],
  async handler({ args }, ctx) {
    const client = await ctx.client();
    const id = await resolveProxyId(client, args.proxy!);
    await client.proxies.delete(id);
    await ctx.output.result({ id, deleted: true }, () => ctx.output.line(`Deleted proxy ${id}.`));
  },
});

export const proxies: CommandGroup = {
  name: 'proxies',
  description: 'manage pre-configured proxies (svc invoke proxy calls one)',
  commands: [list, get, create, update, patch, remove],
};
