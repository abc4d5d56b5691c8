import { configurationPatch } from '../../../requests/configuration.js';
import { readCodeFile, readConfiguration } from '../../../requests/files.js';
import { resolveReactorId } from '../../../requests/lookup.js';
import { patchReactorBody } from '../../../requests/reactors.js';
import { sentReactor, withCodePaths } from '../../io/code-paths.js';
import { UsageError } from '../../io/errors.js';
import { defineCommand } from '../../registry.js';
import { applicationFlag } from '../applications/shared.js';
import { reactorArg, reactorOptions } from './shared.js';
import { DECLINED, confirmWrite, yesOption } from '../../io/confirm.js';

export const patch = defineCommand({
  name: 'patch',
  description: 'change some fields of a reactor (JSON merge patch); --configuration pairs merge into the current ones',
  args: [reactorArg],
  options: [
    ...reactorOptions,
    { flags: '--unset <key>', description: 'remove a configuration key (repeatable)', repeatable: true },
    { flags: '--no-application', description: 'unbind the Application' },
    yesOption,
  ],
  async handler({ args, options }, ctx) {
    if (!(await confirmWrite(ctx, options.yes, `patching reactor "${args.reactor}"`))) return DECLINED;
    const client = await ctx.client();
    const id = await resolveReactorId(client, args.reactor);
    const set = await readConfiguration(options.configuration, ctx.io.cwd, '--configuration');
    const code = options.code === undefined ? undefined : await readCodeFile(options.code, ctx.io.cwd);
    // `--application ''` is no change, as before: only a name or --no-application changes the binding.
    const applicationId = await applicationFlag(client, options.application === '' ? undefined : options.application);
    const configuration = configurationPatch(set, options.unset);
    const patch = patchReactorBody({ name: options.name, code, configuration, applicationId });
    if (Object.keys(patch).length === 0)
      throw new UsageError('Nothing to change: pass --name, --code, --configuration, --unset or --[no-]application.');
    await withCodePaths([sentReactor(options.code)], () => client.reactors.patch(id, patch));
    await ctx.output.result({ id, patched: Object.keys(patch) }, () =>
      ctx.output.line(`Patched reactor ${id} (${Object.keys(patch).join(', ')}).`),
    );
  },
});
