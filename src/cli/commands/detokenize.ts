import { readJsonInput } from '../io/input.js';
import { defineCommand } from '../registry.js';
import { showJson } from './tokens/shared.js';

export const detokenize = defineCommand({
  name: 'detokenize',
  description: "replace {{ token_id }} expressions in a JSON value with the tokens' data (needs token:use)",
  options: [{ flags: '--data <json>', description: 'the value: JSON, @file or - (default: stdin)' }],
  examples: [`svc detokenize --data '{"card":"{{ 0b3f0f56-... }}"}'`],
  async handler({ options }, ctx) {
    const value = await readJsonInput(options.data, ctx.io, '--data');
    const result = await (await ctx.client()).tokens.detokenize(value);
    await ctx.output.result(result, () => showJson(ctx.output, result));
  },
});
