import { configurationPatch } from '../../../requests/configuration.js';
import { readConfiguration } from '../../../requests/files.js';
import { resolveProxyId } from '../../../requests/lookup.js';
import { patchProxyBody } from '../../../requests/proxies.js';
import { UsageError } from '../../io/errors.js';
import { urlOption } from '../../io/input.js';
import { defineCommand } from '../../registry.js';
import { applicationFlag } from '../applications/shared.js';
import { withCodePaths } from '../../io/code-paths.js';
import { noTransforms, proxyArg, proxyOptions, sentTransforms, transformCode } from './shared.js';
import { DECLINED, confirmWrite, yesOption } from '../../io/confirm.js';

export const patch = defineCommand({
  name: 'patch',
  description: 'change some fields of a proxy (JSON merge patch); --configuration pairs merge into the current ones',
  args: [proxyArg],
  options: [
    ...proxyOptions,
    ...noTransforms,
    { flags: '--unset <key>', description: 'remove a configuration key (repeatable)', repeatable: true },
    yesOption,
  ],
  async handler({ args, options }, ctx) {
    const destinationUrl = urlOption(options.destinationUrl, '--destination-url');
    if (!(await confirmWrite(ctx, options.yes, `patching proxy "${args.proxy}"`))) return DECLINED;
    const client = await ctx.client();
    const id = await resolveProxyId(client, args.proxy);
    const set = await readConfiguration(options.configuration, ctx.io.cwd, '--configuration');
    const requestTransform = await transformCode(options.requestTransform, ctx.io);
    const responseTransform = await transformCode(options.responseTransform, ctx.io);
    const patch = patchProxyBody({
      name: options.name,
      destinationUrl,
      requestTransform,
      responseTransform,
      configuration: configurationPatch(set, options.unset),
      applicationId: await applicationFlag(client, options.application),
      requireAuth: options.requireAuth,
    });
    if (Object.keys(patch).length === 0)
      throw new UsageError('Nothing to change: pass a field to change (see --help).');
    await withCodePaths(sentTransforms(options), () => client.proxies.patch(id, patch));
    await ctx.output.result({ id, patched: Object.keys(patch) }, () =>
      ctx.output.line(`Patched proxy ${id} (${Object.keys(patch).join(', ')}).`),
    );
  },
});
