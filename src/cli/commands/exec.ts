import { existsSync } from 'node:fs';
import path from 'node:path';
import { constants } from 'node:os';
import { DEFAULT_HOST } from '../../api/defaults.js';
import { UsageError, UserError } from '../io/errors.js';
import { defineCommand } from '../registry.js';

const USAGE = 'svc exec [--config svc.yaml] [--port N] -- COMMAND [ARGS...]';

export const exec = defineCommand({
  name: 'exec',
  description: 'run a command against a fresh in-memory emulator with svc.yaml applied, then stop it',
  args: [{ name: 'command', description: 'the command to run, after --', rest: true }],
  options: [
    { flags: '--config <file>', description: 'apply this svc.yaml first (default: ./svc.yaml when there is one)' },
    { flags: '--port <port>', description: 'port for the emulator; 0 picks a free one', default: '0' },
    {
      flags: '--allow-outside-project',
      description: 'with --config: read files svc.yaml names outside its folder (symlinks resolved) too',
    },
  ],
  notes: [
    `Everything after -- is the command, as typed: ${USAGE}`,
    'The command gets SVC_BASE_URL, SVC_MANAGEMENT_KEY, SVC_API_KEY (the private key) and, for each Application',
    'of svc.yaml, SVC_KEY_<NAME> (the name upper-cased, each other character as _: my-app -> SVC_KEY_MY_APP).',
    "The emulator keeps everything in memory and writes no files; svc exits with the command's code (128+n",
    'for a signal n, 127 when the command is not found). SIGINT and SIGTERM are passed on to the command.',
  ],
  examples: ['svc exec -- npm test', 'svc exec --config svc.yaml -- node integration.js'],
  async handler({ args, options }, { io, globals }) {
    const words = args.command;
    if (words === undefined || words.length === 0) {
      throw new UsageError(`svc exec runs the command after --: ${USAGE}`);
    }
    if (!/^\d+$/.test(options.port) || Number(options.port) > 65535) {
      throw new UsageError(`--port must be a whole number from 0 to 65535, not "${options.port}".`);
    }
    if (options.config !== undefined && !existsSync(path.resolve(io.cwd, options.config))) {
      throw new UsageError(`--config names ${options.config}, which does not exist.`);
    }
    const configFile = options.config ?? (existsSync(path.join(io.cwd, 'svc.yaml')) ? 'svc.yaml' : undefined);
    const [{ createEmulator, EmulatorError }, { inFlags }, { applyExecConfig }, { execEnvironment }, { runChild }] =
      await Promise.all([
        import('../../emulator/index.js'),
        import('../serve/log.js'),
        import('../exec/config.js'),
        import('../exec/environment.js'),
        import('../exec/child.js'),
      ]);
    const emulator = createEmulator({
      port: Number(options.port),
      host: DEFAULT_HOST,
      inMemory: true,
      debug: globals.debug,
      runtime: { projectDir: io.cwd, prewarm: true },
    });
    try {
      const started = await emulator.ready.catch((error: unknown) => {
        throw error instanceof EmulatorError ? new UserError(inFlags(error), { cause: error }) : error;
      });
      const { managementKey, privateKey } = started.bootstrap.keys;
      if (managementKey === undefined || privateKey === undefined) {
        throw new Error('the in-memory emulator generated no bootstrap keys');
      }
      const { ApiClient } = await import('../../client/index.js');
      const client = new ApiClient({ baseUrl: started.url, managementKey });
      const keys =
        configFile === undefined
          ? []
          : await applyExecConfig({
              client,
              file: configFile,
              cwd: io.cwd,
              env: io.env,
              ...(options.allowOutsideProject && { allowOutsideProject: true }),
            });
      // Interrupted while starting: the command never runs.
      if (io.signal.aborted) return signalCode(io.signal.reason);
      const env = execEnvironment(io.env, { url: started.url, managementKey, apiKey: privateKey, applications: keys });
      const [command, ...rest] = words;
      return await runChild({ command: command!, args: rest, env, io });
    } finally {
      await emulator.dispose().catch(() => {});
    }
  },
});

function signalCode(reason: unknown): number {
  const signal = reason === 'SIGTERM' ? 'SIGTERM' : 'SIGINT';
  return 128 + constants.signals[signal];
}
