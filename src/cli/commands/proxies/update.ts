import { readConfiguration } from '../../../requests/files.js';
import { resolveProxyId } from '../../../requests/lookup.js';
import { updateProxyBody } from '../../../requests/proxies.js';
import { urlOption } from '../../io/input.js';
import { defineCommand } from '../../registry.js';
import { applicationFlag } from '../applications/shared.js';
import { withCodePaths } from '../../io/code-paths.js';
import { noTransforms, proxyArg, proxyOptions, sentTransforms, showProxy, transformCode } from './shared.js';
import { DECLINED, confirmWrite, yesOption } from '../../io/confirm.js';

export const update = defineCommand({
  name: 'update',
  description: 'replace a proxy (PUT); fields not given keep their current values',
  args: [proxyArg],
  options: [...proxyOptions, ...noTransforms, yesOption],
  async handler({ args, options }, ctx) {
    const destinationUrl = urlOption(options.destinationUrl, '--destination-url');
    if (!(await confirmWrite(ctx, options.yes, `updating proxy "${args.proxy}"`))) return DECLINED;
    const client = await ctx.client();
    const id = await resolveProxyId(client, args.proxy);
    const current = await client.proxies.get(id);
    const applicationId = await applicationFlag(client, options.application);
    const requestTransform = await transformCode(options.requestTransform, ctx.io);
    const responseTransform = await transformCode(options.responseTransform, ctx.io);
    const configuration = await readConfiguration(options.configuration, ctx.io.cwd, '--configuration');
    const body = updateProxyBody(current, {
      name: options.name,
      destinationUrl,
      requestTransform,
      responseTransform,
      configuration,
      applicationId,
      requireAuth: options.requireAuth,
    });
    const proxy = await withCodePaths(sentTransforms(options), () => client.proxies.update(id, body));
    await ctx.output.result(proxy, () => showProxy(ctx.output, proxy));
  },
});
