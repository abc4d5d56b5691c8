import { readConfiguration } from '../../../resources/files.js';
import { createProxyBody } from '../../../resources/proxies.js';
import { UsageError } from '../../errors.js';
import { defineCommand } from '../../registry.js';
import { applicationFlag } from '../applications/shared.js';
import { withCodePaths } from '../../code-paths.js';
import { proxyOptions, sentTransforms, showProxy, transformCode } from './shared.js';

export const create = defineCommand({
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
      configuration: await readConfiguration(options.configuration, ctx.io.cwd, '--configuration'),
      applicationId,
      requireAuth: options.requireAuth,
    });
    const proxy = await withCodePaths(sentTransforms(options), () => client.proxies.create(body));
    await ctx.output.result(proxy, () => showProxy(ctx.output, proxy));
  },
});
