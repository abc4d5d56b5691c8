import { readConfiguration } from '../../../requests/files.js';
import { createProxyBody } from '../../../requests/proxies.js';
import { UsageError } from '../../io/errors.js';
import { defineCommand } from '../../registry.js';
import { urlOption } from '../../io/input.js';
import { applicationFlag } from '../applications/shared.js';
import { allowDuplicateOption, refuseDuplicate } from '../duplicate.js';
import { proxyOptions, showProxy, transformCode, sentTransforms } from './shared.js';
import { withCodePaths } from '../../io/code-paths.js';
import { DECLINED, confirmWrite, yesOption } from '../../io/confirm.js';

export const create = defineCommand({
  name: 'create',
  description: 'create a proxy (transforms are checked to load)',
  options: [...proxyOptions, allowDuplicateOption, yesOption],
  examples: [
    'svc proxies create --name stripe --destination-url https://api.stripe.com --request-transform transforms/sign.js',
  ],
  async handler({ options }, ctx) {
    if (options.name === undefined || options.destinationUrl === undefined)
      throw new UsageError('A proxy needs --name and --destination-url.');
    const destinationUrl = urlOption(options.destinationUrl, '--destination-url')!;
    // Only a file names a transform here: create has no --no-...-transform.
    const { requestTransform: request, responseTransform: response } = options;
    const requestTransform = request ? await transformCode(request, ctx.io) : undefined;
    const responseTransform = response ? await transformCode(response, ctx.io) : undefined;
    const configuration = await readConfiguration(options.configuration, ctx.io.cwd, '--configuration');
    if (!(await confirmWrite(ctx, options.yes, `creating proxy "${options.name}"`))) return DECLINED;
    const client = await ctx.client();
    await refuseDuplicate(client, 'proxy', options.name, options.allowDuplicate);
    const applicationId = await applicationFlag(client, options.application);
    const body = createProxyBody({
      name: options.name,
      destinationUrl,
      requestTransform,
      responseTransform,
      configuration,
      applicationId,
      requireAuth: options.requireAuth,
    });
    const proxy = await withCodePaths(sentTransforms(options), () => client.proxies.create(body));
    await ctx.output.result(proxy, () => showProxy(ctx.output, proxy));
  },
});
