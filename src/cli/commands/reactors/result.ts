import { resolveReactorId } from '../../../requests/lookup.js';
import { defineCommand } from '../../registry.js';
import { reactorArg } from './shared.js';

export const result = defineCommand({
  name: 'result',
  description: 'show the result of an asynchronous invocation',
  args: [reactorArg, { name: 'request-id', description: 'the id the invocation answered with (202)' }],
  async handler({ args }, ctx) {
    const client = await ctx.client();
    const outcome = await client.reactors.result(await resolveReactorId(client, args.reactor), args['request-id']);
    await ctx.output.result(outcome, () => ctx.output.line(JSON.stringify(outcome, null, 2)));
  },
});
