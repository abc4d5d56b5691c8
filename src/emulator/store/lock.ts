import { StoreError, cannotWrite } from './errors.js';
import { tryLockFile } from '../../lib/file-lock.js';

/** An advisory lock beside the data file, so that two emulators never write the same store. */
export async function acquireLock(lockFile: string, dataFile: string): Promise<() => Promise<void>> {
  let taken: Awaited<ReturnType<typeof tryLockFile>>;
  try {
    taken = await tryLockFile(lockFile);
  } catch (error) {
    throw cannotWrite(lockFile, error);
  }
  if ('release' in taken) return taken.release;
  if (taken.heldBy === 0)
    throw new StoreError(`Cannot lock ${dataFile}: remove ${lockFile} if no svc serve is running.`, lockFile);
  throw inUse(dataFile, lockFile, taken.heldBy);
}

function inUse(dataFile: string, lockFile: string, pid: number): StoreError {
  return new StoreError(
    (name) =>
      `${dataFile} is in use by another svc serve (pid ${pid}). Stop it, or give another ${name('data')} ` +
      `(if pid ${pid} is no svc, remove ${lockFile}).`,
    lockFile,
  );
}
