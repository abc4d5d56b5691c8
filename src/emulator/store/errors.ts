import { EmulatorError } from '../errors.js';
import { describeCause, remedyFor } from './io.js';

/**
 * A store file that cannot be used as it is. The message names the file and what to do; the
 * store never rewrites a file it could not read, so nothing is lost by stopping here.
 */
export class StoreError extends EmulatorError {
  override readonly name: string = 'StoreError';
  constructor(
    message: ConstructorParameters<typeof EmulatorError>[0],
    readonly file: string,
  ) {
    super(message);
  }
}

/**
 * A change the store could not save (a full or read-only disk): nothing of it was applied, in
 * memory or on disk, so the caller may simply retry once the cause is gone.
 */
export class StoreWriteError extends StoreError {
  override readonly name = 'StoreWriteError';
  constructor(
    file: string,
    override readonly cause: unknown,
    /** `blocked`: the change was not tried, as the journal is full of saved writes waiting for `file`. */
    why: 'failed' | 'blocked' = 'failed',
  ) {
    const what =
      why === 'blocked'
        ? `the journal is full of saved writes waiting for ${file}, which cannot be written`
        : `writing ${file} failed`;
    super(
      (name) =>
        `The change was not saved: ${what}: ${describeCause(cause)}. Nothing of it was kept; ${remedyFor(cause, name)} and retry.`,
      file,
    );
  }
}

export function corruptFile(file: string, reason: string): StoreError {
  return new StoreError(
    (name) =>
      `${file} is not a valid svc data file (${reason}). svc left it untouched: restore it from a ` +
      `backup, or move it aside to start that collection empty (or use ${name('inMemory')}).`,
    file,
  );
}

/** A file the store needs at start that it cannot create or change: names the file and the cause. */
export function cannotWrite(file: string, error: unknown): StoreError {
  return new StoreError((name) => `Cannot write ${file}: ${describeCause(error)}; ${remedyFor(error, name)}.`, file);
}
