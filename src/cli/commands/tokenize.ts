import { readJsonInput } from '../io/input.js';
import { defineCommand } from '../registry.js';
import { showJson, transactionOption } from './tokens/shared.js';

export const tokenize = defineCommand({
  name: 'tokenize',
  description: 'tokenize a JSON value: {type, data} objects become tokens, other leaves token ids',
  options: [{ flags: '--data <json>', description: 'the value: JSON, @file or - (default: stdin)' }, transactionOption],
  examples: [
    `svc tokenize --data '{"name":"Jane","card":{"type":"card","data":{"number":"4242424242424242","expiration_month":1,"expiration_year":2031}}}'`,
  ],
  async handler({ options }, ctx) {
    const value = await readJsonInput(options.data, ctx.io, '--data');
    const result = await (await ctx.client()).tokens.tokenize(value, options.transaction);
    await ctx.output.result(result, () => showJson(ctx.output, result));
  },
});
