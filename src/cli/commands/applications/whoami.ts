import { ApiError } from '../../../client/errors.js';
import { describeKey, describeKeyShort, keyJson } from '../../target/key-source.js';
import { defineCommand } from '../../registry.js';
import { showApplication } from './shared.js';

export const whoami = defineCommand({
  name: 'whoami',
  description: 'show the Application of the key given (--api-key when given, else the management key), and that key',
  async handler(_input, ctx) {
    const [flags, target] = await Promise.all([ctx.flags(), ctx.target()]);
    // The key given on the command line is the one asked about: --api-key, when given there.
    const kind = flags.apiKey !== undefined ? 'api' : 'management';
    const key = target.keys[kind];
    const client = await ctx.client();
    const app = await client.applications.self(kind).catch((error: unknown) => {
      if (key && error instanceof ApiError && error.status === 403) {
        const note =
          `The key sent, ${describeKey(key, kind)}, is valid, ` +
          'but only a key with application:read can show its Application.';
        throw new ApiError(error.status, error.problem, { key: kind, note });
      }
      throw error;
    });
    const described = key ? { ...app, key_used: keyJson(key) } : app;
    await ctx.output.result(described, async () => {
      await showApplication(ctx.output, app, key ? [['key used', describeKeyShort(key, kind)]] : []);
    });
  },
});
