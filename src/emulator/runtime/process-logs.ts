/**
 * The console lines a sandbox process sends, seen from the emulator: counted again against the
 * budgets the sandbox keeps (log-budget.ts), with room for the notices it adds, so that a sandbox
 * that sends past them has the rest dropped, counted.
 */
import { CallLogBudget, StrayLogBudget } from './log-budget.js';
import type { FromSandbox } from './protocol.js';
import type { LogEntry } from './types.js';

/** Room for the notice the sandbox sends when it cuts console output: a line, and its bytes. */
const LOG_SLACK = 256;
const CALL_LOG_SLACK = { lines: 1, bytes: LOG_SLACK };
/** Output with no call running: the sandbox's notices, and its clock running a little ahead of ours. */
const STRAY_LOG_SLACK = { lines: 8, bytes: 2 * LOG_SLACK, linesPerSecond: 1 };

export interface LogLimits {
  maxLogLines: number;
  maxLogBytes: number;
  strayLogLinesPerSecond: number;
}

/** What a line needs of the call it was written in. */
export interface LoggingCall {
  instance: string;
  requestId: string | undefined;
  logs: LogEntry[];
  logBudget: CallLogBudget;
}

export class ProcessLogs {
  /** Console lines the sandbox sent past its budgets, dropped here (a sandbox that keeps its own sends none). */
  dropped = 0;
  /** Console output with no call running (top-level code, its timers), refilled slowly. */
  private readonly stray: StrayLogBudget;

  constructor(
    private readonly limits: LogLimits,
    private readonly onLog: (entry: LogEntry) => void,
  ) {
    this.stray = new StrayLogBudget(
      { maxLines: limits.maxLogLines, maxBytes: limits.maxLogBytes, linesPerSecond: limits.strayLogLinesPerSecond },
      () => performance.now(),
      STRAY_LOG_SLACK,
    );
  }

  /** A call's budget: the sandbox cuts at it and sends a notice, and the check here leaves room for it. */
  callBudget(): CallLogBudget {
    return new CallLogBudget({ maxLines: this.limits.maxLogLines, maxBytes: this.limits.maxLogBytes }, CALL_LOG_SLACK);
  }

  /**
   * A `log` message, of `call` (undefined: no call was running; `instance` names the version it
   * belongs to): kept in the call's logs and passed on, within the budget.
   */
  receive(message: Extract<FromSandbox, { type: 'log' }>, call: LoggingCall | undefined, instance: string): void {
    const text = (call ? call.logBudget : this.stray).take(() => message.text);
    if (text === undefined) {
      this.dropped++;
      return;
    }
    const entry: LogEntry = {
      level: message.level,
      text,
      instance: call?.instance ?? instance,
      requestId: call?.requestId,
    };
    call?.logs.push(entry);
    this.onLog(entry);
  }
}
