import { TOKEN_TYPES } from '../../../api/types.js';
import { parsePairs } from '../../../requests/configuration.js';
import { dateTimeOption, parseJson, readInput } from '../../io/input.js';
import { UsageError } from '../../io/errors.js';
import { defineCommand } from '../../registry.js';
import { showToken, transactionOption } from './shared.js';

export const create = defineCommand({
  name: 'create',
  description: 'create a token',
  options: [
    { flags: '--type <type>', description: 'token type', choices: TOKEN_TYPES, default: 'token' },
    {
      flags: '--data <json>',
      description: 'the data: JSON, @file or - (stdin); for type token a bare string is taken as is',
    },
    { flags: '--id <id>', description: 'a custom token id' },
    {
      flags: '--container <container>',
      description: 'container, e.g. /pci/high/ (repeatable; default by type)',
      repeatable: true,
    },
    { flags: '--metadata <key=value>', description: 'metadata pair (repeatable)', repeatable: true },
    { flags: '--mask <json>', description: 'what `mask` access shows instead of the data (JSON)' },
    { flags: '--expires-at <date-time>', description: 'delete the token at this ISO 8601 time' },
    transactionOption,
  ],
  examples: [
    `svc tokens create --type card --data '{"number":"4242424242424242","expiration_month":12,"expiration_year":2030}'`,
    'svc tokens create --data "my secret" --container /general/low/',
  ],
  async handler({ options }, ctx) {
    const expiresAt = dateTimeOption(options.expiresAt, '--expires-at');
    const text = await readInput(options.data, ctx.io, '--data');
    if (text === undefined) throw new UsageError('Give the token data with --data (JSON, @file or -).');
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      if (options.type !== 'token') parseJson(text, '--data');
      // A bare string; from a file or a pipe, without the line end that `echo` adds.
      data =
        options.data === undefined || options.data === '-' || options.data.startsWith('@')
          ? text.replace(/\r?\n$/, '')
          : text;
    }
    const client = await ctx.client();
    const metadata = parsePairs(options.metadata, '--metadata');
    const token = await client.tokens.create(
      {
        type: options.type,
        data,
        ...(options.id !== undefined && { id: options.id }),
        ...(options.container && { containers: options.container }),
        ...(metadata && { metadata }),
        ...(options.mask !== undefined && { mask: parseJson(options.mask, '--mask') }),
        ...(expiresAt !== undefined && { expires_at: expiresAt }),
      },
      options.transaction,
    );
    await ctx.output.result(token, () => showToken(ctx.output, token));
  },
});
