import { readCodeFile, readConfiguration } from '../../../requests/files.js';
import { createReactorBody } from '../../../requests/reactors.js';
import { sentReactor, withCodePaths } from '../../io/code-paths.js';
import { UsageError } from '../../io/errors.js';
import { defineCommand } from '../../registry.js';
import { applicationFlag } from '../applications/shared.js';
import { allowDuplicateOption, refuseDuplicate } from '../duplicate.js';
import { reactorOptions, showReactor } from './shared.js';
import { DECLINED, confirmWrite, yesOption } from '../../io/confirm.js';

export const create = defineCommand({
  name: 'create',
  description: 'create a reactor from a code file (checked to load)',
  options: [...reactorOptions, allowDuplicateOption, yesOption],
  examples: [
    'svc reactors create --name charge --code reactors/charge.js --configuration API_URL=https://example.com --application backend',
  ],
  async handler({ options }, ctx) {
    if (options.name === undefined || options.code === undefined)
      throw new UsageError('A reactor needs --name and --code.');
    const code = await readCodeFile(options.code, ctx.io.cwd);
    const configuration = await readConfiguration(options.configuration, ctx.io.cwd, '--configuration');
    if (!(await confirmWrite(ctx, options.yes, `creating reactor "${options.name}"`))) return DECLINED;
    const client = await ctx.client();
    await refuseDuplicate(client, 'reactor', options.name, options.allowDuplicate);
    const applicationId = await applicationFlag(client, options.application);
    const body = createReactorBody({ name: options.name, code, configuration, applicationId });
    const reactor = await withCodePaths([sentReactor(options.code)], () => client.reactors.create(body));
    await ctx.output.result(reactor, () => showReactor(ctx.output, reactor));
  },
});
