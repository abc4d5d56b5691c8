import { resolveReactorId } from '../../../requests/lookup.js';
import { defineCommand } from '../../registry.js';
import { reactorArg, showReactor } from './shared.js';

export const get = defineCommand({
  name: 'get',
  description: 'show a reactor',
  args: [reactorArg],
  options: [{ flags: '--show-code', description: 'print the code too' }],
  async handler({ args, options }, ctx) {
    const client = await ctx.client();
    const reactor = await client.reactors.get(await resolveReactorId(client, args.reactor));
    await ctx.output.result(reactor, async () => {
      await showReactor(ctx.output, reactor);
      if (options.showCode) ctx.output.line(`\n${reactor.code}`);
    });
  },
});
