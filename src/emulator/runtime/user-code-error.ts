import { PROBLEM_TYPES } from '../../api/problem.js';
import { HttpError } from '../errors.js';
import type { LogEntry } from './types.js';

/**
 * User code failed: it did not load (422), timed out (408), ran out of memory, or threw (the
 * platform error classes' statuses, else 500). `userStack` is for the emulator log only; a
 * CustomHttpResponseError's `custom` response is passed through as it is.
 */
export class UserCodeError extends HttpError {
  override readonly name = 'UserCodeError';
  constructor(
    status: number,
    detail: string,
    readonly options: {
      title?: string;
      userStack?: string | undefined;
      custom?: { status: number; headers: Record<string, string>; body: unknown } | undefined;
      logs?: LogEntry[];
      /** A call that never got to run (its sandbox was held): when to try again. */
      retryAfter?: number;
    } = {},
  ) {
    super(status, detail, {
      title: options.title,
      // The code's own failure, whatever status it carries; a timeout, an unloaded version and a call
      // that never got to run say so.
      type:
        status === 408
          ? PROBLEM_TYPES.timeout
          : status === 409
            ? PROBLEM_TYPES.conflict
            : status === 503
              ? PROBLEM_TYPES.unavailable
              : status === 413
                ? PROBLEM_TYPES.payloadTooLarge
                : PROBLEM_TYPES.userCode,
      response: options.custom,
      retryAfter: options.retryAfter,
    });
  }

  get userStack(): string | undefined {
    return this.options.userStack;
  }

  get custom() {
    return this.options.custom;
  }

  get logs(): LogEntry[] {
    return this.options.logs ?? [];
  }
}

/** The sandbox process went away while loading code, for a reason of its own: loading again may work. */
export class SandboxStoppedError extends UserCodeError {}
