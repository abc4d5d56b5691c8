import { open, readFile, unlink } from 'node:fs/promises';
import { StoreError } from './errors.js';
import { FILE_MODE } from './durable-file.js';

/**
 * Locks this process holds. The lock file records only a pid, so two emulators in one process
 * (tests, a library user) need this to tell their own live lock from a stale one.
 */
const held = new Set<string>();

/**
 * An advisory lock beside the data file, so that two emulators never write the same store.
 * A lock left by a process that is gone is taken over.
 */
export async function acquireLock(lockFile: string, dataFile: string): Promise<() => Promise<void>> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      if (held.has(lockFile)) throw inUse(dataFile, lockFile, process.pid);
      const handle = await open(lockFile, 'wx', FILE_MODE);
      await handle.writeFile(String(process.pid));
      await handle.close();
      held.add(lockFile);
      return async () => {
        held.delete(lockFile);
        await unlink(lockFile).catch(() => {});
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number.parseInt(await readFile(lockFile, 'utf8').catch(() => ''), 10);
      if (Number.isInteger(owner) && owner !== process.pid && isAlive(owner)) throw inUse(dataFile, lockFile, owner);
      await unlink(lockFile).catch(() => {});
    }
  }
  throw new StoreError(`Cannot lock ${dataFile}: remove ${lockFile} if no svc serve is running.`, lockFile);
}

function inUse(dataFile: string, lockFile: string, pid: number): StoreError {
  return new StoreError(`${dataFile} is in use by another svc serve (pid ${pid}). Stop it, or pass another --data path.`, lockFile);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
