import { EmulatorError } from '../errors.js';

/**
 * A store file that cannot be used as it is. The message names the file and what to do; the
 * store never rewrites a file it could not read, so nothing is lost by stopping here.
 */
export class StoreError extends EmulatorError {
  override readonly name = 'StoreError';
  constructor(
    message: string,
    readonly file: string,
  ) {
    super(message);
  }
}

export function corruptFile(file: string, reason: string): StoreError {
  return new StoreError(
    `${file} is not a valid svc data file (${reason}). svc left it untouched: restore it from a ` +
      `backup, or move it aside to start that collection empty (or use --in-memory).`,
    file,
  );
}
