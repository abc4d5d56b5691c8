import { useInput, useStdin, useStdout } from 'ink';
import { useLayoutEffect, useReducer, useRef } from 'react';
import { ServeDashboard } from './components/ServeDashboard.js';
import { createDashboardLog, type DashboardLog } from './dashboard-log.js';
import { initialDashboardState, reduceDashboard } from './dashboard-state.js';
import type { ServeFeed } from './serve-feed.js';
import type { ServeKey, ServeResource } from './serve-types.js';

export interface LiveServeDashboardProps {
  url: string;
  keys: ServeKey[];
  resources: ServeResource[];
  /** The events and notes to log; the dashboard's own notes (a failed re-apply) go through it too. */
  feed: ServeFeed;
  /** `q` typed, or Ctrl-C (which raw mode turns into input): `interrupted`. */
  onQuit: (reason: 'q' | 'interrupted') => void;
  onReapply?: (() => void | Promise<void>) | undefined;
  /** Told how many items of the feed (counted from the first) are written to the terminal, or cleared. */
  onSettled?: ((count: number) => void) | undefined;
  /**
   * Paint the log lines with ANSI colours, and the live part with colours, bold and dim text (the
   * caller knows --no-color, NO_COLOR and FORCE_COLOR=0); true unless said.
   */
  color?: boolean | undefined;
  /** Show the URL and keys as an `export` line for another shell (in memory: no credentials file). */
  exportLine?: boolean | undefined;
}

/**
 * Scrolls the screen's content up into the scrollback (nothing is lost there) and leaves a blank
 * screen, the way `clear` does in most terminals.
 */
export function clearScreen(rows: number | undefined): string {
  return `${'\n'.repeat(Math.max((rows ?? 0) - 1, 0))}\u001b[H\u001b[0J`;
}

/**
 * The serve dashboard with its state: subscribes to the events, writes their lines above the live
 * part (dashboard-log.ts: once per turn of the event loop, bounded), renders the counters and answers
 * the keys. Keys are read only when stdin is a terminal: ink's raw mode would throw on anything else.
 */
export function LiveServeDashboard({
  url,
  keys,
  resources,
  feed,
  onQuit,
  onReapply,
  onSettled,
  color = true,
  exportLine = false,
}: LiveServeDashboardProps) {
  const [state, dispatch] = useReducer(reduceDashboard, initialDashboardState);
  const { isRawModeSupported } = useStdin();
  const { stdout, write } = useStdout();
  const reapplying = useRef(false);

  const log = useRef<DashboardLog | undefined>(undefined);
  const settled = useRef(onSettled);
  settled.current = onSettled;

  // A layout effect subscribes during the first render itself, so no event between mount and a
  // passive effect is missed.
  useLayoutEffect(() => {
    const current = createDashboardLog({
      write,
      onTally: (tally) => dispatch({ type: 'feed', tally }),
      onSettled: (count) => settled.current?.(count),
      color,
      backlog: () => stdout.writableLength ?? 0,
    });
    log.current = current;
    const stop = feed.subscribe((item) => current.push(item));
    return () => {
      stop();
      current.close();
    };
  }, [feed, write, stdout, color]);

  const reapply = () => {
    if (!onReapply) {
      feed.note({ level: 'warn', text: 'Nothing to re-apply: svc serve was started without an svc.yaml.' });
      return;
    }
    if (reapplying.current) return;
    reapplying.current = true;
    dispatch({ type: 'reapplying', on: true });
    void (async () => {
      try {
        await onReapply();
      } catch (error) {
        feed.note({
          level: 'error',
          text: `Re-apply failed: ${error instanceof Error ? error.message : String(error)}`,
        });
      } finally {
        reapplying.current = false;
        dispatch({ type: 'reapplying', on: false });
      }
    })();
  };

  useInput(
    (input, key) => {
      // In raw mode Ctrl-C arrives as input, not as SIGINT.
      if (key.ctrl && input === 'c') return onQuit('interrupted');
      if (key.ctrl || key.meta) return;
      // With no key to show, `k` is not offered and does nothing.
      if (input === 'k' && keys.length > 0) return dispatch({ type: 'toggle-keys' });
      dispatch({ type: 'hide-keys' });
      if (input === 'q') return onQuit('q');
      if (input === '?') return dispatch({ type: 'toggle-help' });
      if (input === 'r') return reapply();
      if (input === 'c') {
        log.current?.discard();
        write(clearScreen(stdout.rows));
        dispatch({ type: 'clear' });
      }
    },
    { isActive: isRawModeSupported === true },
  );

  return (
    <ServeDashboard
      url={url}
      keys={keys}
      revealKeys={state.revealKeys}
      resources={resources}
      requests={state.requests}
      failures={state.failures}
      leaks={state.leaks}
      lastReload={state.lastReload}
      reapplying={state.reapplying}
      showHelp={state.showHelp}
      interactive={isRawModeSupported === true}
      canReapply={onReapply !== undefined}
      color={color}
      exportLine={exportLine}
    />
  );
}
