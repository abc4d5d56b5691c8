import { formatEvent, formatNote, type EventLine } from './format-event.js';
import type { ServeEvent, ServeNote } from './serve-types.js';

/** What reaches the dashboard's log: an emulator event, or a line of `svc serve`'s own. */
export type FeedItem = { kind: 'event'; event: ServeEvent } | { kind: 'note'; note: ServeNote };

export interface LogEntry {
  id: number;
  line: EventLine;
}

export interface DashboardState {
  /**
   * Log lines not yet written by ink's `<Static>`. Once written they belong to the terminal (its
   * scrollback and copy), so they are dropped here: memory stays flat however long serve runs.
   */
  pending: LogEntry[];
  /** Keys `<Static>`: a new generation starts from an empty list after the written lines are dropped. */
  generation: number;
  nextId: number;
  /** Every entry up to this id is written (or was cleared before it could be). */
  settledId: number;
  requests: number;
  failures: number;
  /** The last hot reload, kept in view after its log line scrolls away. */
  lastReload?: EventLine | undefined;
  revealKeys: boolean;
  showHelp: boolean;
  reapplying: boolean;
}

export type DashboardAction =
  | { type: 'feed'; items: FeedItem[] }
  | { type: 'written'; upTo: number }
  | { type: 'clear' }
  | { type: 'toggle-keys' }
  | { type: 'hide-keys' }
  | { type: 'toggle-help' }
  | { type: 'reapplying'; on: boolean };

export const initialDashboardState: DashboardState = {
  pending: [],
  generation: 0,
  nextId: 1,
  settledId: 0,
  requests: 0,
  failures: 0,
  revealKeys: false,
  showHelp: false,
  reapplying: false,
};

/** The dashboard's state machine: pure, so that every transition has a unit test. */
export function reduceDashboard(state: DashboardState, action: DashboardAction): DashboardState {
  switch (action.type) {
    case 'feed': {
      let { nextId, requests, failures, lastReload } = state;
      const added: LogEntry[] = [];
      for (const item of action.items) {
        const line = item.kind === 'event' ? formatEvent(item.event) : formatNote(item.note);
        added.push({ id: nextId++, line });
        if (item.kind === 'note') {
          if (item.note.level === 'error') failures++;
          continue;
        }
        const { event } = item;
        if (event.type === 'request') {
          requests++;
          if (event.status >= 500) failures++;
        } else if (event.type === 'error' || (event.type === 'reload' && !event.ok)) {
          failures++;
        }
        if (event.type === 'reload') lastReload = line;
      }
      return { ...state, pending: [...state.pending, ...added], nextId, requests, failures, lastReload };
    }
    case 'written': {
      const pending = state.pending.filter((entry) => entry.id > action.upTo);
      return { ...state, pending, generation: state.generation + 1, settledId: Math.max(state.settledId, action.upTo) };
    }
    case 'clear':
      return {
        ...state,
        pending: [],
        generation: state.generation + 1,
        settledId: state.nextId - 1,
        requests: 0,
        failures: 0,
        lastReload: undefined,
      };
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
