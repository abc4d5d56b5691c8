import { emptyTally, tallyItem, type FeedItem, type FeedTally } from './dashboard-state.js';
import { formatEvent, formatNote, plainLine } from './format-event.js';
import { createLogGate, droppedText } from './log-gate.js';

/** Bytes the terminal may be behind on (written, not yet taken) before lines are dropped rather than queued. */
const MAX_BEHIND_BYTES = 1 << 20;

export interface DashboardLogOptions {
  /** Writes above the live part (ink's `write`: clears the live part, writes, draws it again). */
  write(text: string): void;
  /** What a turn's items add to the counters. */
  onTally(tally: FeedTally): void;
  /** How many items of the feed (counted from the first) are written, dropped and said so, or discarded. */
  onSettled?: ((count: number) => void) | undefined;
  color: boolean;
  /** The bytes the terminal has not taken yet. */
  backlog?: () => number;
}

export interface DashboardLog {
  push(item: FeedItem): void;
  /** Forgets the lines gathered and not yet written (the screen was cleared). */
  discard(): void;
  /** Writes nothing more; a count of dropped lines not yet said is lost with the screen. */
  close(): void;
}

/**
 * The dashboard's log, which must never fall behind the emulator: items are gathered and written
 * once per turn of the event loop, as plain text through ink's `write` (a line written through
 * `<Static>` cost a millisecond of React and layout; a flood of 65k console lines stalled the
 * emulator for seconds), at most LINES_PER_WINDOW a second (log-gate.ts; the rest are dropped and
 * counted in one line). Every item still counts in the counters.
 */
export function createDashboardLog(options: DashboardLogOptions): DashboardLog {
  const { color } = options;
  let text = '';
  let tally = emptyTally();
  let received = 0;
  let closed = false;
  let scheduled: NodeJS.Immediate | undefined;

  const gate = createLogGate<FeedItem>(
    {
      line: (item) => {
        text += plainLine(item.kind === 'event' ? formatEvent(item.event) : formatNote(item.note), color);
      },
      dropped: (count) => {
        text += plainLine(formatNote({ level: 'warn', text: droppedText(count) }), color);
        schedule();
      },
    },
    { behind: () => (options.backlog?.() ?? 0) > MAX_BEHIND_BYTES },
  );
  const flush = () => {
    scheduled = undefined;
    if (closed) return;
    if (text !== '') {
      const written = text;
      text = '';
      options.write(written);
    }
    if (tally.requests > 0 || tally.failures > 0 || tally.lastReload) {
      options.onTally(tally);
      tally = emptyTally();
    }
    // Dropped items are settled once their count is written.
    options.onSettled?.(received - gate.pending);
  };
  function schedule() {
    if (!closed) scheduled ??= setImmediate(flush);
  }
  return {
    push(item) {
      received++;
      tallyItem(tally, item);
      // svc serve's own lines (an apply's result, stopping) are always shown.
      if (item.kind === 'note') gate.always(item);
      else gate.offer(item);
      schedule();
    },
    discard() {
      // The flush already scheduled for them still says they are settled.
      text = '';
      tally = emptyTally();
    },
    close() {
      closed = true;
      if (scheduled) clearImmediate(scheduled);
      gate.report();
    },
  };
}
