/**
 * The console user code gets (in the sandbox): each line goes to the emulator as a message, tagged
 * with the call it belongs to and counted against that call's budget, or, with no call running
 * (top-level code, its timers, an uncaught error), against the process's budget (log-budget.ts).
 */
import { format } from 'node:util';
import { CallLogBudget, type LogLimits, StrayLogBudget } from './log-budget.js';
import type { FromSandbox, InitRequest, LogLevel } from './protocol.js';

/** What a console line needs of the call it is written in. */
export interface ConsoleCaller {
  id: number;
  vid: string;
  cancelled: boolean;
  finished: boolean;
  logBudget: CallLogBudget;
}

export class UserConsole {
  /** Shared by the process's output outside any call, refilled slowly (set at init: nothing logs before). */
  private stray: StrayLogBudget | undefined;
  private limits: LogLimits | undefined;
  /** The version being loaded: what a line outside any call belongs to meanwhile. */
  loading: string | null = null;

  constructor(
    private readonly post: (message: FromSandbox) => void,
    /** The call the code running now belongs to, if any. */
    private readonly current: () => ConsoleCaller | undefined,
    private readonly now: () => number,
  ) {}

  init(init: InitRequest): void {
    this.limits = { maxLines: init.maxLogLines, maxBytes: init.maxLogBytes };
    this.stray = new StrayLogBudget({ ...this.limits, linesPerSecond: init.strayLogLinesPerSecond }, this.now);
  }

  /** A fresh budget for a call. */
  callBudget(): CallLogBudget {
    return new CallLogBudget(this.limits!);
  }

  /** `console` for one code version. */
  forVersion(vid: string) {
    const method =
      (level: LogLevel) =>
      (...args: unknown[]) =>
        this.log(level, args, vid);
    return harden({
      log: method('log'),
      info: method('info'),
      warn: method('warn'),
      error: method('error'),
      debug: method('debug'),
      trace: method('debug'),
    });
  }

  /** A console line, counted against its call's budget, or the process's when no call is running. */
  log(level: LogLevel, args: unknown[], vid: string | null = null): void {
    const call = this.current();
    // A call that is over (returned, or given up on) has nobody to read its output.
    if (call && (call.cancelled || call.finished)) return;
    const budget = call ? call.logBudget : this.stray;
    if (!budget) return;
    const text = budget.take(() => {
      try {
        return format(...args);
      } catch (error) {
        return `[unprintable: ${(error as Error).message}]`;
      }
    });
    if (text === undefined) return;
    this.post({ type: 'log', id: call?.id ?? null, vid: call?.vid ?? vid ?? this.loading, level, text });
  }
}
