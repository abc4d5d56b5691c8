import { PROBLEM_TYPES, type ProblemLocation } from '../../api/problem.js';

/** Where in a code file a load problem is (the problem's `location`): here for the runtime, which imports no api/. */
export type CodeLocation = ProblemLocation;
import { HttpError } from '../errors.js';
import { isErrorStatus } from './platform-errors.js';
import type { SerializedError } from './protocol.js';
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
      /** Code that does not load: the file and where in it, the problem's `location` extension. */
      location?: CodeLocation;
      /** A platform error's `errors` (what its constructor was given), the problem's `errors`. */
      errors?: Record<string, string[]> | undefined;
      /** A refusal's `explanation` (a 401 or 403 the code chose): who asked, and that the code refused. */
      explanation?: unknown;
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
      errors: options.errors,
      ...((options.location !== undefined || options.explanation !== undefined) && {
        extensions: {
          ...(options.location && { location: options.location }),
          ...(options.explanation !== undefined && { explanation: options.explanation }),
        },
      }),
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

/**
 * What user code threw, as the emulator answers it: a custom response as it was given; a platform
 * error with its class's status, its fixed text as `detail` and its `errors`; anything else a 500.
 */
export function fromSerialized(error: SerializedError, logs: LogEntry[]): UserCodeError {
  if (error.custom) {
    // The status as the code gave it (the emulator refuses one outside 200-599, naming the code); the
    // error's own status is 500 unless the custom one is a sendable one.
    const custom = {
      ...error.custom,
      status: typeof error.custom.status === 'number' ? error.custom.status : Number.NaN,
    };
    const status =
      Number.isInteger(custom.status) && custom.status >= 200 && custom.status <= 599 ? custom.status : 500;
    return new UserCodeError(status, String(error.message), {
      title: 'Custom response',
      custom,
      logs,
      userStack: error.stack,
    });
  }
  // A result nested too deep is refused as the emulator refuses such JSON (400); any other bad one is a 500.
  if (error.kind === 'result')
    return new UserCodeError(error.status === 400 ? 400 : 500, String(error.message), {
      title: 'Invalid result',
      logs,
    });
  if (error.status !== undefined) {
    // A platform error's answer is the code's answer to its caller, as the platform words it.
    // The sandbox is not trusted: a status no error has is a 500.
    return new UserCodeError(isErrorStatus(error.status) ? error.status : 500, String(error.message), {
      userStack: error.stack,
      logs,
      errors: error.errors ?? {},
    });
  }
  // An unexpected error says where it was thrown (`charge.js:3:9: TypeError: ...`), as a load error does.
  const where = error.location === undefined ? '' : `${error.location}: `;
  return new UserCodeError(500, `${where}${String(error.name)}: ${String(error.message)}`, {
    title: 'User code error',
    userStack: error.stack,
    logs,
  });
}
