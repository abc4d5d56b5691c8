import type { Proxy } from '../../../api/types.js';
import { configurationPatch } from '../../../resources/configuration.js';
import { readCodeFile, readConfiguration } from '../../../resources/files.js';
import { resolveProxyId } from '../../../resources/lookup.js';
import { createProxyBody, patchProxyBody, updateProxyBody } from '../../../resources/proxies.js';
import { UsageError } from '../../errors.js';
import { intOption } from '../../input.js';
import type { IO } from '../../io.js';
import type { Output } from '../../output.js';
import { defineCommand, type CommandGroup } from '../../registry.js';
import { applicationFlag } from '../applications/shared.js';
import { notePages, pagingOptions } from '../paging.js';

export const proxyArg = { name: 'proxy', description: 'proxy id or exact name' };

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
  { flags: '--name <name>', description: 'name (up to 200 characters)' },
  { flags: '--destination-url <url>', description: 'where requests are forwarded (absolute http/https URL)' },
  { flags: '--request-transform <file>', description: 'code run on each request before it is forwarded' },
  { flags: '--response-transform <file>', description: "code run on the destination's response" },
  { flags: '--configuration <pair>', description: 'KEY=VALUE, or @file.env (repeatable)', repeatable: true },
  { flags: '--application <application>', description: 'Application (id or name) for the transforms and anonymous detokenization' },
  { flags: '--require-auth', description: 'callers must send an API key with token:use (the default)' },
  { flags: '--no-require-auth', description: 'accept anonymous callers' },
];

/** A transform flag: the code of the file it names, `null` for `--no-...-transform`, or not given. */
async function transformCode(value: string | false | undefined, io: IO): Promise<string | null | undefined> {
  if (value === undefined) return undefined;
  return value === false ? null : readCodeFile(value, io.cwd);
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
    const applicationId = await applicationFlag(client, options.application);
    const body = createProxyBody({
      name: options.name,
      destinationUrl: options.destinationUrl,
      // Only a file names a transform here: create has no --no-...-transform.
      requestTransform: options.requestTransform ? await transformCode(options.requestTransform, ctx.io) : undefined,
      responseTransform: options.responseTransform ? await transformCode(options.responseTransform, ctx.io) : undefined,
      configuration: options.configuration && (await readConfiguration(options.configuration, ctx.io.cwd, '--configuration')),
      applicationId,
      requireAuth: options.requireAuth,
    });
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
    const applicationId = await applicationFlag(client, options.application);
    const requestTransform = await transformCode(options.requestTransform, ctx.io);
    const responseTransform = await transformCode(options.responseTransform, ctx.io);
    const configuration = await readConfiguration(options.configuration, ctx.io.cwd, '--configuration');
    const proxy = await client.proxies.update(
      id,
      updateProxyBody(current, {
        name: options.name,
        destinationUrl: options.destinationUrl,
        requestTransform,
        responseTransform,
        configuration,
        applicationId,
        requireAuth: options.requireAuth,
      }),
    );
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
    const set = await readConfiguration(options.configuration, ctx.io.cwd, '--configuration');
    const requestTransform = await transformCode(options.requestTransform, ctx.io);
    const responseTransform = await transformCode(options.responseTransform, ctx.io);
    const patch = patchProxyBody({
      name: options.name,
      destinationUrl: options.destinationUrl,
      requestTransform,
      responseTransform,
      configuration: configurationPatch(set, options.unset),
      applicationId: await applicationFlag(client, options.application),
      requireAuth: options.requireAuth,
    });
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
