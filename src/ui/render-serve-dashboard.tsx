import { render } from 'ink';
import { LiveServeDashboard } from './live-serve-dashboard.js';
import { createServeFeed } from './serve-feed.js';
import type { ServeEventSource, ServeKey, ServeNote, ServeResource } from './serve-types.js';

/** How long `unmount` waits for the last lines to be written before it lets go anyway. */
const DRAIN_MS = 2000;

export interface ServeDashboardOptions {
  /** Where the emulator listens. */
  url: string;
  /** The bootstrap keys by name; shown masked until `k` is pressed. */
  keys: ServeKey[];
  /** What svc.yaml put on the emulator (none without one); `setResources` updates it. */
  resources?: ServeResource[];
  /** The emulator's events (its hub). */
  events: ServeEventSource;
  /** `q`, or Ctrl-C (`interrupted`): the caller stops the emulator, then calls `unmount`. */
  onQuit: (reason: 'q' | 'interrupted') => void;
  /** `r`: apply svc.yaml again. A rejection is shown in the log. Without it, `r` says there is none. */
  onReapply?: (() => void | Promise<void>) | undefined;
  /** Paint the log lines and the live part (false with --no-color, NO_COLOR or FORCE_COLOR=0); true unless said. */
  color?: boolean | undefined;
  /** Show the URL and keys as an `export` line for another shell (in memory: no credentials file). */
  exportLine?: boolean | undefined;
  stdout?: NodeJS.WriteStream;
  stderr?: NodeJS.WriteStream;
  stdin?: NodeJS.ReadStream;
}

export interface ServeDashboard {
  /** Replaces the resources shown (after a reload of svc.yaml). */
  setResources(resources: ServeResource[]): void;
  /** Adds a line of the caller's own to the log: an apply result, a warning. */
  note(note: ServeNote): void;
  /** Writes the lines still on their way, leaves the last frame on screen, gives the terminal back. */
  unmount(): Promise<void>;
}

/**
 * Renders the `svc serve` dashboard (ink) and returns plain functions, so that the CLI never touches
 * React. Use it only when stdout is a terminal and `CI` is not set; elsewhere serve prints lines.
 * Without a terminal on stdin it still renders, and reads no keys (Ctrl-C then stops serve as usual).
 */
export function renderServeDashboard(options: ServeDashboardOptions): ServeDashboard {
  const feed = createServeFeed(options.events);
  let settled = 0;
  let onProgress: (() => void) | undefined;
  let resources = options.resources ?? [];
  const onSettled = (count: number) => {
    settled = count;
    onProgress?.();
  };
  const tree = () => (
    <LiveServeDashboard
      url={options.url}
      keys={options.keys}
      resources={resources}
      feed={feed}
      onQuit={options.onQuit}
      onReapply={options.onReapply}
      onSettled={onSettled}
      color={options.color}
      exportLine={options.exportLine}
    />
  );
  const instance = render(tree(), {
    ...(options.stdout && { stdout: options.stdout }),
    ...(options.stderr && { stderr: options.stderr }),
    ...(options.stdin && { stdin: options.stdin }),
    // Ctrl-C is a key like q: the caller decides how serve stops.
    exitOnCtrlC: false,
  });
  // Asked for now: ink resolves only a promise that exists when it unmounts.
  const exited = instance.waitUntilExit();

  /** Resolves once every line delivered so far is on the terminal (React renders them a turn later). */
  const drained = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, DRAIN_MS);
      onProgress = () => {
        if (settled < feed.delivered) return;
        clearTimeout(timer);
        resolve();
      };
      onProgress();
    });

  let unmounted: Promise<void> | undefined;
  return {
    setResources(next) {
      resources = next;
      if (!unmounted) instance.rerender(tree());
    },
    note: (note) => feed.note(note),
    unmount() {
      unmounted ??= (async () => {
        await drained();
        onProgress = undefined;
        instance.unmount();
        await exited;
      })();
      return unmounted;
    },
  };
}
