import { formatEvent, type EventLine } from './format-event.js';
import type { ServeEvent, ServeNote } from './serve-types.js';

/** What reaches the dashboard's log: an emulator event, or a line of `svc serve`'s own. */
export type FeedItem = { kind: 'event'; event: ServeEvent } | { kind: 'note'; note: ServeNote };

/**
 * What fed items add to the counters. Every item counts, whether its line is shown or dropped (the
 * log shows a bounded number of lines, log-gate.ts), so the counters stay true under a flood.
 */
export interface FeedTally {
  requests: number;
  failures: number;
  /** Leak events (the leak guard found a call's plaintext where it may not go). */
  leaks?: number;
  lastReload?: EventLine | undefined;
}

export const emptyTally = (): FeedTally => ({ requests: 0, failures: 0, leaks: 0 });

/** Adds `item` to `tally`: cheap (no formatting, but for a reload), as it runs for every event of a flood. */
export function tallyItem(tally: FeedTally, item: FeedItem): void {
  if (item.kind === 'note') {
    if (item.note.level === 'error') tally.failures++;
    return;
  }
  const { event } = item;
  if (event.type === 'request') {
    tally.requests++;
    // A 408 is a failure too: a call that timed out (a reactor's code that never answered).
    if (event.status >= 500 || event.status === 408) tally.failures++;
  } else if (event.type === 'error' || (event.type === 'reload' && !event.ok)) {
    tally.failures++;
  } else if (event.type === 'leak') {
    tally.leaks = (tally.leaks ?? 0) + 1;
  }
  if (event.type === 'reload') tally.lastReload = formatEvent(event);
}

/**
 * The live part's state. The log itself is not state: its lines are written to the terminal above
 * the live part as they come (and then belong to its scrollback), so memory stays flat however long
 * serve runs.
 */
export interface DashboardState {
  requests: number;
  failures: number;
  /** Leak events seen: the dashboard's leak badge (0: none shown). */
  leaks: number;
  /** The last hot reload, kept in view after its log line scrolls away. */
  lastReload?: EventLine | undefined;
  revealKeys: boolean;
  showHelp: boolean;
  reapplying: boolean;
}

export type DashboardAction =
  | { type: 'feed'; tally: FeedTally }
  | { type: 'clear' }
  | { type: 'toggle-keys' }
  | { type: 'hide-keys' }
  | { type: 'toggle-help' }
  | { type: 'reapplying'; on: boolean };

export const initialDashboardState: DashboardState = {
  requests: 0,
  failures: 0,
  leaks: 0,
  revealKeys: false,
  showHelp: false,
  reapplying: false,
};

/** The dashboard's state machine: pure, so that every transition has a unit test. */
export function reduceDashboard(state: DashboardState, action: DashboardAction): DashboardState {
  switch (action.type) {
    case 'feed': {
      const { tally } = action;
      return {
        ...state,
        requests: state.requests + tally.requests,
        failures: state.failures + tally.failures,
        leaks: state.leaks + (tally.leaks ?? 0),
        lastReload: tally.lastReload ?? state.lastReload,
      };
    }
    case 'clear':
      return { ...state, requests: 0, failures: 0, leaks: 0, lastReload: undefined };
    case 'toggle-keys':
      return { ...state, revealKeys: !state.revealKeys };
    case 'hide-keys':
      return state.revealKeys ? { ...state, revealKeys: false } : state;
    case 'toggle-help':
      return { ...state, showHelp: !state.showHelp };
    case 'reapplying':
      return { ...state, reapplying: action.on };
  }
}
