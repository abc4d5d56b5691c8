import path from 'node:path';
import { CREDENTIALS_FILE, STATE_DIR } from '../api/defaults.js';
import type { ApiClient, KeyKind } from '../client/index.js';
import { resolveTarget, type GlobalFlags, type Target } from './target/resolve.js';
import { UserError } from './io/errors.js';
import { readKeyFlags } from './target/key-flags.js';
import type { IO } from './io/process.js';
import type { Output } from './io/output.js';

export interface GlobalOptions extends GlobalFlags {
  json: boolean;
  color: boolean;
  debug: boolean;
}

/** What a handler gets instead of singletons (STYLE.md 3). */
export interface Context {
  io: IO;
  output: Output;
  globals: GlobalOptions;
  /** The global flags, with a key given as `-` read from stdin (or a hidden prompt); read once. */
  flags(): Promise<GlobalOptions>;
  /** The resolved base URL and keys (read lazily: `serve` and `profiles` never need them). */
  target(): Promise<Target>;
  /** The API client for the target; undici is loaded on first use. */
  client(): Promise<ApiClient>;
}

export function createContext(io: IO, output: Output, globals: GlobalOptions): Context {
  let flags: Promise<GlobalOptions> | undefined;
  let target: Promise<Target> | undefined;
  let client: Promise<ApiClient> | undefined;
  const context: Context = {
    io,
    output,
    globals,
    flags: () => (flags ??= readKeyFlags(globals, io)),
    target: () => (target ??= context.flags().then((given) => resolveTarget(given, io.env, io.cwd))),
    client: () =>
      (client ??= (async () => {
        const [resolved, { ApiClient }] = await Promise.all([context.target(), import('../client/index.js')]);
        return new ApiClient({
          baseUrl: resolved.baseUrl,
          ...(resolved.managementKey !== undefined && { managementKey: resolved.managementKey }),
          ...(resolved.apiKey !== undefined && { apiKey: resolved.apiKey }),
          missingKey: (kind) => missingKey(kind, resolved),
          onRequest: (label) => output.busy(label),
        });
      })()),
  };
  return context;
}

function missingKey(kind: KeyKind, target: Target): UserError {
  const [flag, env] = kind === 'management' ? ['--management-key', 'SVC_MANAGEMENT_KEY'] : ['--api-key', 'SVC_API_KEY'];
  const local =
    target.source === 'local'
      ? `, or start the emulator here (\`svc serve\`) so that ${path.join(STATE_DIR, CREDENTIALS_FILE)} exists`
      : '';
  return new UserError(
    `No ${kind === 'management' ? 'management' : 'API'} key for ${target.baseUrl}: pass ${flag}, set ${env}, use a profile (\`svc profiles add\`)${local}.`,
  );
}
