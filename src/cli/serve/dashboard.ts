import type { EmulatorReady } from '../../emulator/index.js';
import { renderServeDashboard } from '../../ui/render-serve-dashboard.js';
import type { ServeKey, ServeResource } from '../../ui/serve-types.js';
import { bootstrapKeys } from './bootstrap-keys.js';
import type { IO } from '../io/process.js';
import type { ServeConfig } from './config.js';
import type { ServeRelay } from './relay.js';

export interface DashboardServeOptions {
  started: EmulatorReady;
  relay: ServeRelay;
  io: IO;
  /** Resolves when serve is to stop (Ctrl-C, SIGTERM); `quit` resolves it (`q`). */
  stop: Promise<string>;
  quit: (reason: string) => void;
  dispose: () => Promise<void>;
  /** Colour (false with --no-color or NO_COLOR; FORCE_COLOR=0 is read here, as ink's own colours do). */
  color: boolean;
  /** Applies and watches svc.yaml, when there is one. */
  startConfig: ((onResources: (resources: ServeResource[]) => void) => Promise<ServeConfig | undefined>) | undefined;
}

/** `svc serve` on a terminal: the dashboard until `q` or Ctrl-C, then the emulator stops. */
export async function serveWithDashboard(options: DashboardServeOptions): Promise<void> {
  const { started, io } = options;
  const keys = await dashboardKeys(started);
  let config: ServeConfig | undefined;
  // ink needs the process's own streams (a terminal's size, raw mode); serve runs on a TTY here.
  const stdin = io.stdin.isTTY === true ? (io.stdin as NodeJS.ReadStream) : undefined;
  const dashboard = renderServeDashboard({
    url: started.url,
    keys,
    events: options.relay,
    onQuit: (reason) => options.quit(reason),
    onReapply: options.startConfig && (() => config?.reapply()),
    color: options.color && io.env.FORCE_COLOR !== '0',
    // In memory no credentials file lets the CLI find the emulator: the export line does (as serve's banner).
    exportLine: started.credentialsFile === undefined,
    stdout: io.stdout as NodeJS.WriteStream,
    ...(stdin && { stdin }),
  });
  config = await options.startConfig?.((resources) => dashboard.setResources(resources));
  const reason = await options.stop;
  dashboard.note({ level: 'info', text: `Stopping (${reason})…` });
  await config?.close();
  try {
    await options.dispose();
    dashboard.note({ level: 'info', text: 'Stopped; the store is flushed.' });
  } finally {
    await dashboard.unmount();
  }
}

/**
 * The keys the dashboard shows (masked until `k`): those given or made by this start, else those of the
 * credentials file (a restart with a store: the keys are not in the start's hands), and the tenant's
 * webhook signing secret.
 */
async function dashboardKeys(started: EmulatorReady): Promise<ServeKey[]> {
  const { managementKey: management, privateKey } = await bootstrapKeys(started);
  return [
    ...(management ? [{ name: 'management', value: management }] : []),
    ...(privateKey ? [{ name: 'private', value: privateKey }] : []),
    ...(started.webhookSecret ? [{ name: 'webhook secret', value: started.webhookSecret }] : []),
  ];
}
