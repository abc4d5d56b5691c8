import { packageVersion } from '../../lib/package-version.js';
import type { Context } from '../context.js';
import { defineCommand } from '../registry.js';

/** How long `svc version` waits for the server before it reports it unreachable. */
const HEALTH_TIMEOUT_MS = 2000;

export const version = defineCommand({
  name: 'version',
  description: 'print the versions of svc, Node.js and the server (from its /health, when it answers)',
  examples: ['svc version', 'svc version --json', 'svc version --base-url https://api.example.com'],
  async handler(_input, ctx) {
    const server = await serverVersion(ctx);
    const result = { svc: packageVersion(), node: process.version, server };
    await ctx.output.result(result, () => {
      ctx.output.line(`svc     ${result.svc}`);
      ctx.output.line(`node    ${result.node}`);
      const shown = server.reachable
        ? `${server.version ?? 'answers (no version given)'}`
        : `not reachable (${server.error})`;
      ctx.output.line(`server  ${shown} at ${server.url}`);
    });
  },
});

type ServerVersion =
  | { url: string; reachable: true; version?: string }
  | { url: string; reachable: false; error: string };

async function serverVersion(ctx: Context): Promise<ServerVersion> {
  const client = await ctx.client();
  try {
    const health = await client.health(AbortSignal.timeout(HEALTH_TIMEOUT_MS));
    return { url: client.baseUrl, reachable: true, ...(health.version !== undefined && { version: health.version }) };
  } catch (error) {
    const name = (error as Error).name;
    const message = name === 'TimeoutError' ? `no answer in ${HEALTH_TIMEOUT_MS / 1000} s` : (error as Error).message;
    return { url: client.baseUrl, reachable: false, error: message };
  }
}
