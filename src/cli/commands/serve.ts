import path from 'node:path';
import { DEFAULT_DATA_PATH, DEFAULT_HOST, DEFAULT_PORT } from '../../api/defaults.js';
import { DEFAULT_TIER, TIERS, type Tier } from '../../api/tiers.js';
import { UsageError, UserError } from '../errors.js';
import { defineCommand } from '../registry.js';
import type { EmulatorReady } from '../../emulator/index.js';
import type { LogFormat } from '../serve-log.js';

interface ServeOptions {
  port: string;
  host: string;
  data?: string;
  inMemory?: boolean;
  privateKey?: string;
  tier: Tier;
  transactionTtl?: string;
  logFormat?: LogFormat;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `90s`, `30m`, `2h`, `1500ms`; a bare number is seconds. */
export function parseDuration(value: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  if (!match) throw new UsageError(`${flag} takes a duration such as 90s, 30m or 2h, not "${value}".`);
  const ms = Math.round(Number(match[1]) * UNITS[match[2] ?? 's']!);
  if (ms < 1000) throw new UsageError(`${flag} must be at least 1s, not "${value}".`);
  return ms;
}

export const serve = defineCommand<ServeOptions>({
  name: 'serve',
  description: 'run the local emulator of the platform API',
  options: [
    { flags: '--port <port>', description: 'port to listen on; 0 picks a free one', default: String(DEFAULT_PORT) },
    { flags: '--host <host>', description: 'address to listen on', default: DEFAULT_HOST },
    { flags: '--data <path>', description: `data file (default ${DEFAULT_DATA_PATH})` },
    { flags: '--in-memory', description: 'keep everything in memory; write no files' },
    { flags: '--private-key <key>', description: 'key of the bootstrap private Application (env SVC_PRIVATE_KEY); --management-key sets the management one' },
    { flags: '--tier <tier>', description: 'platform tier to emulate', choices: [...TIERS], default: DEFAULT_TIER },
    { flags: '--transaction-ttl <duration>', description: 'how long a transaction stays open, e.g. 30m (default 1h)' },
    { flags: '--log-format <format>', description: 'pretty, or json lines (the default when stdout is not a terminal)', choices: ['pretty', 'json'] },
  ],
  examples: ['svc serve', 'svc serve --port 0 --in-memory --log-format json', 'SVC_MANAGEMENT_KEY=... svc serve --data /tmp/ci.json'],
  async handler({ options }, { io, globals }) {
    if (options.data !== undefined && options.inMemory) throw new UsageError('--data and --in-memory cannot be used together.');
    if (!/^\d+$/.test(options.port)) throw new UsageError(`--port must be a whole number from 0 to 65535, not "${options.port}".`);
    const transactionTtlMs = options.transactionTtl === undefined ? undefined : parseDuration(options.transactionTtl, '--transaction-ttl');
    const [{ createEmulator, EmulatorError }, { createServeLog, inFlags }] = await Promise.all([import('../../emulator/index.js'), import('../serve-log.js')]);
    // An expected failure (a port in use, a damaged store) is for the user as it is, in the CLI's terms.
    const userError = (error: unknown) => (error instanceof EmulatorError ? new UserError(inFlags(error.message), { cause: error }) : error);
    const format: LogFormat = options.logFormat ?? (io.stdout.isTTY ? 'pretty' : 'json');
    const log = createServeLog(format, io, globals.color && io.stdout.isTTY === true);
    const dataFile = options.inMemory ? undefined : path.resolve(io.cwd, options.data ?? DEFAULT_DATA_PATH);
    const managementKey = globals.managementKey ?? io.env.SVC_MANAGEMENT_KEY;
    const privateKey = options.privateKey ?? io.env.SVC_PRIVATE_KEY;

    const emulator = createEmulator({
      port: Number(options.port),
      host: options.host,
      ...(dataFile ? { data: dataFile } : { inMemory: true }),
      ...(managementKey !== undefined && { managementKey }),
      ...(privateKey !== undefined && { privateKey }),
      tier: options.tier,
      ...(transactionTtlMs !== undefined && { transactionTtlMs }),
      ...(io.env.SVC_MASTER_KEY !== undefined && { masterKey: io.env.SVC_MASTER_KEY }),
      debug: globals.debug,
      runtime: { projectDir: io.cwd, prewarm: true },
    });
    emulator.events.subscribe(log.event);
    const stop = new Promise<string>((resolve) => {
      if (io.signal.aborted) resolve(String(io.signal.reason ?? 'abort'));
      io.signal.addEventListener('abort', () => resolve(String(io.signal.reason ?? 'abort')), { once: true });
    });
    let started: EmulatorReady;
    try {
      started = await emulator.ready;
    } catch (error) {
      await emulator.dispose();
      // What the start said before it failed (a damaged store, say) is written before the error.
      log.release();
      log.flush();
      throw userError(error);
    }
    log.started(started, dataFile && path.relative(io.cwd, dataFile));
    log.stopping(await stop);
    await emulator.dispose().catch((error: unknown) => {
      throw userError(error);
    });
    log.stopped();
  },
});
