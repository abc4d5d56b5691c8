/**
 * How much of a flood of events a log for people shows. One reactor can print tens of thousands of
 * console lines in a call, and a load test sends thousands of requests a second: writing every line
 * to a terminal would keep the emulator's event loop busy with the terminal (the dashboard stalled
 * `/health` for seconds), and queueing them would grow without bound. So a log shows at most
 * `perWindow` lines per window (a second) and drops the rest, counting them; one line then says how
 * many were dropped, before the next line shown or at the window's end. The JSON log is not gated:
 * it is for machines, and keeps every line.
 */

/** Lines a log for people shows per window, at most: far more than anyone reads, little work for the terminal. */
export const LINES_PER_WINDOW = 1000;
export const WINDOW_MS = 1000;

export interface LogGateSink<T> {
  /** Shows one item (admitted). */
  line(item: T): void;
  /** Says that `count` items were dropped since the last item shown. */
  dropped(count: number): void;
}

export interface LogGateOptions {
  perWindow?: number;
  windowMs?: number;
  /** A monotonic clock in milliseconds. */
  now?: () => number;
  /** Whether the output is behind (bytes it has not written yet): then items are dropped too. */
  behind?: () => boolean;
}

export interface LogGate<T> {
  /** Shows `item` if the window has room (and the output keeps up), else counts it as dropped. */
  offer(item: T): void;
  /** Shows `item` whatever the window holds (a line of svc's own), after the count of what was dropped. */
  always(item: T): void;
  /** Items dropped and not yet reported. */
  readonly pending: number;
  /** Says now how many were dropped (before a line of svc's own, or at the end), and stops the timer. */
  report(): void;
}

export function createLogGate<T>(sink: LogGateSink<T>, options: LogGateOptions = {}): LogGate<T> {
  const perWindow = options.perWindow ?? LINES_PER_WINDOW;
  const windowMs = options.windowMs ?? WINDOW_MS;
  const now = options.now ?? (() => performance.now());
  let windowStart = Number.NEGATIVE_INFINITY;
  let shown = 0;
  let dropped = 0;
  let timer: NodeJS.Timeout | undefined;

  const report = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (dropped === 0) return;
    const count = dropped;
    dropped = 0;
    sink.dropped(count);
  };
  const hasRoom = () => {
    const time = now();
    if (time - windowStart >= windowMs) {
      windowStart = time;
      shown = 0;
    }
    return shown < perWindow && options.behind?.() !== true;
  };
  return {
    offer(item) {
      if (hasRoom()) {
        report();
        shown++;
        sink.line(item);
        return;
      }
      dropped++;
      // The count is said at the window's end if no line comes to say it first (the flood stopped).
      // Unref'd: a pending count never keeps the process alive.
      timer ??= setTimeout(report, Math.max(windowMs - (now() - windowStart), 1)).unref();
    },
    always(item) {
      report();
      sink.line(item);
    },
    get pending() {
      return dropped;
    },
    report,
  };
}

/** The line that says how many lines a log dropped: `… 12,345 lines dropped`. */
export function droppedText(count: number, hint = ''): string {
  return `… ${count.toLocaleString('en-US')} line${count === 1 ? '' : 's'} dropped (more than the log can show)${hint}`;
}
