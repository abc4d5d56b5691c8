import { readCodeFile, readConfiguration } from '../../../requests/files.js';
import { resolveReactorId } from '../../../requests/lookup.js';
import { updateReactorBody } from '../../../requests/reactors.js';
import { sentReactor, withCodePaths } from '../../io/code-paths.js';
import { UsageError } from '../../io/errors.js';
import { defineCommand } from '../../registry.js';
import { applicationFlag } from '../applications/shared.js';
import { reactorArg, reactorOptions, showReactor } from './shared.js';
import { DECLINED, confirmWrite, yesOption } from '../../io/confirm.js';

export const update = defineCommand({
  name: 'update',
  description: 'replace a reactor (PUT); fields not given keep their current values',
  args: [reactorArg],
  options: [...reactorOptions, { flags: '--no-application', description: 'unbind the Application' }, yesOption],
  async handler({ args, options }, ctx) {
    if (!(await confirmWrite(ctx, options.yes, `updating reactor "${args.reactor}"`))) return DECLINED;
    const client = await ctx.client();
    const id = await resolveReactorId(client, args.reactor);
    const current = await client.reactors.get(id);
    if (options.application === '')
      throw new UsageError('--application takes an Application id or name; --no-application unbinds it.');
    const applicationId = await applicationFlag(client, options.application);
    const code = options.code === undefined ? undefined : await readCodeFile(options.code, ctx.io.cwd);
    const configuration = await readConfiguration(options.configuration, ctx.io.cwd, '--configuration');
    const body = updateReactorBody(current, { name: options.name, code, configuration, applicationId });
    const reactor = await withCodePaths([sentReactor(options.code)], () => client.reactors.update(id, body));
    await ctx.output.result(reactor, () => showReactor(ctx.output, reactor));
  },
});
