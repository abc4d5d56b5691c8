import { existsSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_DATA_PATH, DEFAULT_HOST, DEFAULT_PORT } from '../../api/defaults.js';
import { DEFAULT_TIER, TIERS } from '../../api/tiers.js';
import { UsageError, UserError } from '../io/errors.js';
import { defineCommand } from '../registry.js';
import type { EmulatorEvent, EmulatorEventInit } from '../../api/events.js';
import type { EmulatorReady } from '../../emulator/index.js';
import type { IO } from '../io/process.js';
import type { ServeConfig } from '../serve/config.js';
import { createServeRelay } from '../serve/relay.js';
import type { ServeResource } from '../../ui/serve-types.js';
import type { LogFormat } from '../serve/log.js';
import { STATE_FLAGS, serveState } from '../serve/state.js';
import { RECORDING_FLAGS, recordingOptions } from '../serve/recording-flags.js';
import { LEAK_FLAGS, leakOptions } from '../serve/leak-flags.js';
import { QUOTA_FLAGS, quotaOptions } from '../serve/quota-flags.js';
import { INSPECT_FLAGS, serveInspect } from '../serve/inspect-flags.js';
import { SourcePaths } from '../serve/source-paths.js';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `90s`, `30m`, `2h`, `1500ms`; a bare number is seconds. */
export function parseDuration(value: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  if (!match) throw new UsageError(`${flag} takes a duration such as 90s, 30m or 2h, not "${value}".`);
  const ms = Math.round(Number(match[1]) * UNITS[match[2] ?? 's']!);
  if (ms < 1000) throw new UsageError(`${flag} must be at least 1s, not "${value}".`);
  return ms;
}

export const serve = defineCommand({
  name: 'serve',
  description: 'run the local emulator of the platform API',
  options: [
    { flags: '--port <port>', description: 'port to listen on; 0 picks a free one', default: String(DEFAULT_PORT) },
    { flags: '--host <host>', description: 'address to listen on', default: DEFAULT_HOST },
    { flags: '--data <path>', description: `data file (default ${DEFAULT_DATA_PATH})` },
    { flags: '--in-memory', description: 'keep everything in memory; write no files' },
    {
      flags: '--private-key <key>',
      description:
        'key of the bootstrap private Application (env SVC_PRIVATE_KEY); --management-key sets the management one',
    },
    { flags: '--tier <tier>', description: 'platform tier to emulate', choices: [...TIERS], default: DEFAULT_TIER },
    { flags: '--transaction-ttl <duration>', description: 'how long a transaction stays open, e.g. 30m (default 1h)' },
    {
      flags: '--config <file>',
      description: 'apply this svc.yaml at start and on each save (default: ./svc.yaml when there is one)',
    },
    { flags: '--no-watch', description: 'apply svc.yaml at start only' },
    {
      flags: '--allow-outside-project',
      description: 'with --config: read files svc.yaml names outside its folder (symlinks resolved) too',
    },
    {
      flags: '--log-format <format>',
      description: 'pretty, or json lines (the default when stdout is not a terminal)',
      choices: ['pretty', 'json'],
    },
    {
      flags: '--sandbox-isolation <unit>',
      description:
        "what shares a sandbox process: a tenant's code, each version in a compartment of its own (the default), or one owner's (a reactor or proxy: a process boot each)",
      choices: ['tenant', 'owner'],
      default: 'tenant',
    },
    ...STATE_FLAGS,
    ...RECORDING_FLAGS,
    ...LEAK_FLAGS,
    ...QUOTA_FLAGS,
    ...INSPECT_FLAGS,
  ],
  notes: [
    'Also: --management-key <key> (a global option, env SVC_MANAGEMENT_KEY) is the key of the bootstrap management',
    "Application, as --private-key is the private one's; --debug puts the stack trace of an unexpected error in its",
    '500 answer. SVC_MASTER_KEY (the base64 of 32 bytes) seals the store instead of master.key beside the data file.',
  ],
  examples: [
    'svc serve',
    'svc serve --config svc.yaml --no-watch',
    'svc serve --port 0 --in-memory --log-format json',
    'svc serve --record cassettes',
    'svc serve --replay cassettes --on-miss passthrough',
    'svc serve --inspect --config svc.yaml',
    'svc serve --leak-guard fail --leak-guard-allow 4242424242424242',
    'svc serve --quota tokens=1GB --quota tenant=1GB',
    'SVC_MANAGEMENT_KEY=... svc serve --data /tmp/ci.json',
  ],
  async handler({ options }, { io, globals, flags }) {
    if (options.data !== undefined && options.inMemory)
      throw new UsageError('--data and --in-memory cannot be used together.');
    if (!/^\d+$/.test(options.port) || Number(options.port) > 65535)
      throw new UsageError(`--port must be a whole number from 0 to 65535, not "${options.port}".`);
    const configFile = options.config ?? (existsSync(path.join(io.cwd, 'svc.yaml')) ? 'svc.yaml' : undefined);
    if (options.config !== undefined && !existsSync(path.resolve(io.cwd, options.config))) {
      throw new UsageError(`--config names ${options.config}, which does not exist.`);
    }
    // The options of the flags of a feature, each checked by its own module.
    const features = { ...recordingOptions(options, io.cwd), ...leakOptions(options), ...quotaOptions(options) };
    const sources = new SourcePaths(io.cwd);
    const inspect = serveInspect(options.inspect, sources);
    const state = await serveState(options, io);
    const transactionTtlMs =
      options.transactionTtl === undefined ? undefined : parseDuration(options.transactionTtl, '--transaction-ttl');
    const [{ createEmulator, EmulatorError }, { createServeLog, inFlags }] = await Promise.all([
      import('../../emulator/index.js'),
      import('../serve/log.js'),
    ]);
    // An expected failure (a port in use, a damaged store) is for the user as it is, in the CLI's terms.
    const userError = (error: unknown) =>
      error instanceof EmulatorError ? new UserError(inFlags(error), { cause: error }) : error;
    const format: LogFormat = options.logFormat ?? (io.stdout.isTTY ? 'pretty' : 'json');
    const log = createServeLog(format, io, globals.color && io.stdout.isTTY === true);
    const dataFile = options.inMemory ? undefined : path.resolve(io.cwd, options.data ?? DEFAULT_DATA_PATH);
    const managementKey = (await flags()).managementKey ?? io.env.SVC_MANAGEMENT_KEY;
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
      runtime: { projectDir: io.cwd, prewarm: true, isolation: options.sandboxIsolation },
      ...inspect.options,
      ...features,
    });
    // On a terminal (not in CI, no --log-format asked for) the dashboard; elsewhere lines.
    const relay =
      io.stdout.isTTY === true && options.logFormat === undefined && !io.env.CI ? createServeRelay() : undefined;
    emulator.events.subscribe(sources.localized(relay ? relay.publish : log.event));
    let quit: (reason: string) => void = () => {};
    const stop = new Promise<string>((resolve) => {
      quit = resolve;
      if (io.signal.aborted) resolve(String(io.signal.reason ?? 'abort'));
      io.signal.addEventListener('abort', () => resolve(String(io.signal.reason ?? 'abort')), { once: true });
    });
    // Stopped before the start is done (the emulator's, then svc.yaml's first apply): the apply
    // starts no further change, and serve exits as interrupted (130, 143 for SIGTERM), not 0.
    const start = startWatch(stop);
    let started: EmulatorReady;
    try {
      started = await emulator.ready;
    } catch (error) {
      await emulator.dispose();
      // What the start said before it failed (a damaged store, say) is written before the error.
      relay?.subscribe(log.event);
      log.release();
      log.flush();
      throw userError(error);
    }
    await state.importInto(started, () => emulator.dispose());
    const watch = inspect.watching(options.watch !== false, options.allowOutsideProject ?? false);
    if (configFile === undefined) await start.done(undefined);
    if (relay) {
      const { serveWithDashboard } = await import('../serve/dashboard.js');
      const dispose = state.exportFirst(started, () =>
        emulator.dispose().catch((error: unknown) => {
          throw userError(error);
        }),
      );
      const applyConfig =
        configFile === undefined
          ? undefined
          : (onResources: (resources: ServeResource[]) => void) =>
              start.done(startConfig(configFile, started, watch, io, relay.publish, start.signal, onResources));
      const color = globals.color;
      await serveWithDashboard({ started, relay, io, stop, quit, dispose, startConfig: applyConfig, color });
      return start.exitCode();
    }
    log.started(started, dataFile && path.relative(io.cwd, dataFile));
    const config = await start.done(
      configFile === undefined ? undefined : startConfig(configFile, started, watch, io, log.event, start.signal),
    );
    log.stopping(await stop);
    await state.exportAtExit(started);
    await config?.close();
    await emulator.dispose().catch((error: unknown) => {
      throw userError(error);
    });
    log.stopped();
    return start.exitCode();
  },
});

/**
 * Whether serve was stopped while starting: `signal` aborts when `stop` resolves, and `exitCode`
 * says 130 (143 for SIGTERM) when that was before `done`'s work ended, else nothing (exit 0).
 */
function startWatch(stop: Promise<string>) {
  const controller = new AbortController();
  let starting = true;
  let interrupted: string | undefined;
  void stop.then((reason) => {
    // `q` is a quit asked for: exit 0 even during the start (its apply stops all the same).
    if (starting && reason !== 'q') interrupted = reason;
    controller.abort(reason);
  });
  return {
    signal: controller.signal,
    async done<T>(work: Promise<T> | T): Promise<T> {
      try {
        return await work;
      } finally {
        starting = false;
      }
    },
    exitCode: (): number | undefined => (interrupted === undefined ? undefined : interrupted === 'SIGTERM' ? 143 : 130),
  };
}

/**
 * Applies svc.yaml to the emulator just started, with its bootstrap management key (given, generated
 * or saved in the credentials file), and watches it; reports through the serve log's event path.
 */
async function startConfig(
  file: string,
  started: EmulatorReady,
  { watch, allowOutsideProject, sources }: { watch: boolean; allowOutsideProject: boolean; sources?: SourcePaths },
  io: IO,
  report: (event: EmulatorEvent) => void,
  signal: AbortSignal,
  onResources?: (resources: ServeResource[]) => void,
): Promise<ServeConfig | undefined> {
  const [{ startServeConfig }, { bootstrapKeys }] = await Promise.all([
    import('../serve/config.js'),
    import('../serve/bootstrap-keys.js'),
  ]);
  const { managementKey } = await bootstrapKeys(started);
  if (managementKey === undefined) {
    report({
      time: new Date().toISOString(),
      type: 'warning',
      message: `${file} was not applied: the management key of the emulator is unknown (pass --management-key).`,
    });
    return undefined;
  }
  const stamp = (event: EmulatorEventInit) => report({ time: new Date().toISOString(), ...event } as EmulatorEvent);
  return startServeConfig({
    file,
    cwd: io.cwd,
    env: io.env,
    url: started.url,
    managementKey,
    watch,
    allowOutsideProject,
    report: stamp,
    signal,
    ...(onResources && { onResources }),
    ...(sources && { sources }),
  });
}
