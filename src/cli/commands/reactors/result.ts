import { resolveReactorId } from '../../../requests/lookup.js';
import { defineCommand } from '../../registry.js';
import { printResult } from '../invoke/result-view.js';
import { reactorArg } from './shared.js';

export const result = defineCommand({
  name: 'result',
  description: 'show the result of an asynchronous invocation: its status, what it returned and its delivery',
  args: [reactorArg, { name: 'request-id', description: 'the id the invocation answered with (202)' }],
  examples: ['svc reactors result charge 8bb4567a-18da-4fc9-b567-61c58c0b413a --json | jq .raw'],
  async handler({ args }, ctx) {
    const client = await ctx.client();
    const outcome = await client.reactors.result(await resolveReactorId(client, args.reactor), args['request-id']);
    await ctx.output.result(outcome, () => printResult(ctx.output, outcome));
  },
});
