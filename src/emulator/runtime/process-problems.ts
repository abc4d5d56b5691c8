/**
 * The words of what goes wrong with a call or a load in a sandbox process, as the emulator answers
 * it: each a UserCodeError, with the call's console lines kept beside it.
 */
import { megabytes } from '../../lib/megabytes.js';
import type { SerializedError } from './protocol.js';
import type { LogEntry } from './types.js';
import { type CodeLocation, SandboxStoppedError, UserCodeError } from './user-code-error.js';

export const problems = {
  /** Top-level code still ran at the load's timeout. */
  loadTimedOut: (filename: string, ms: number) =>
    new UserCodeError(422, `${filename} did not finish loading within ${ms} ms (a loop at the top level?).`, {
      title: 'Code does not load',
      location: { file: filename },
    }),

  /** The code did not load: its error, file:line:column (in the detail, and as the `location` extension). */
  doesNotLoad: (error: SerializedError, filename: string) =>
    new UserCodeError(422, error.message, {
      title: 'Code does not load',
      userStack: error.stack,
      location: locationOf(filename, error.location),
    }),

  /** A load the process's end cut short: loading again (in a fresh one) may work. */
  loadStopped: (filename: string, reason: string) =>
    new SandboxStoppedError(422, `${filename} did not load: the sandbox process loading it was stopped: ${reason}.`, {
      title: 'Code does not load',
      location: { file: filename },
    }),

  /** Work refused because the process is gone: loading or calling again may work. */
  stopped: (what: string, reason: string) =>
    new SandboxStoppedError(422, `${what}: its sandbox process was stopped (${reason}).`, { title: 'Sandbox stopped' }),

  notStarted: (reason: string) => new UserCodeError(500, `The sandbox process did not start: ${reason}.`),

  /** A call's input that would not fit what crosses to a sandbox: it fails alone, before it is sent. */
  inputTooLarge: (label: string, bytes: number, limit: number) =>
    new UserCodeError(
      413,
      `The input of ${label} is ${megabytes(bytes)} once encoded for the sandbox, over its limit of ${megabytes(limit)}.`,
      { title: 'Payload too large' },
    ),

  timedOut: (timeoutMs: number, logs: LogEntry[]) =>
    new UserCodeError(408, `The code ran longer than its timeout of ${timeoutMs} ms and was stopped.`, {
      title: 'Timed out',
      logs,
    }),

  /** A call that never got to run: a 503 to try again (the process that held it is replaced). */
  notRun: (label: string, why: string, logs: LogEntry[]) =>
    new UserCodeError(503, `${label} did not get to run: ${why}. Try again.`, {
      title: 'Sandbox busy',
      logs,
      retryAfter: 1,
    }),

  /** A call whose process ended under it. */
  callStopped: (label: string, reason: string, logs: LogEntry[]) =>
    new UserCodeError(
      500,
      `The sandbox process running ${label} was stopped: ${reason}. The next call starts a fresh one.`,
      {
        title: reason.includes('out of memory') ? 'Out of memory' : 'Sandbox stopped',
        logs,
      },
    ),

  /** A result frame over the limit (the sandbox checks it first; this is the emulator's own check). */
  resultTooLarge: (limit: number, logs: LogEntry[]) =>
    new UserCodeError(500, `The function's result is over the ${megabytes(limit)} limit.`, {
      title: 'Invalid result',
      logs,
    }),
};

/**
 * A load problem's place: the file, with the line and column of the sandbox's `file:line[:column]`
 * (SerializedError.location, a field the sandbox fills, not prose) when it names this file.
 */
function locationOf(filename: string, at: string | undefined): CodeLocation {
  if (at === undefined || !at.startsWith(`${filename}:`)) return { file: filename };
  const [line, column] = at
    .slice(filename.length + 1)
    .split(':')
    .map(Number);
  return {
    file: filename,
    ...(Number.isInteger(line) && { line }),
    ...(Number.isInteger(column) && { column }),
  };
}
