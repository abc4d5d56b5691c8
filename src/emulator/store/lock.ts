import { readFileSync } from 'node:fs';
import { open, readFile, unlink } from 'node:fs/promises';
import { StoreError, cannotWrite } from './errors.js';
import { FILE_MODE } from '../../lib/durable-file.js';

/**
 * Locks this process holds. A lock file names a process, so two emulators in one process (tests,
 * a library user) need this to tell their own live lock from a stale one.
 */
const held = new Set<string>();

/** What a lock file records: who holds it, and when that process started (to tell a reused pid). */
interface Owner {
  pid: number;
  /** The start time of the process in clock ticks after boot (Linux /proc), or null where unknown. */
  start: string | null;
}

/**
 * An advisory lock beside the data file, so that two emulators never write the same store.
 * A lock left by a process that is gone, or whose pid now belongs to another program (a reboot
 * or a container restart reuses pids), is taken over.
 */
export async function acquireLock(lockFile: string, dataFile: string): Promise<() => Promise<void>> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      if (held.has(lockFile)) throw inUse(dataFile, lockFile, process.pid);
      const handle = await open(lockFile, 'wx', FILE_MODE);
      try {
        await handle.writeFile(JSON.stringify({ pid: process.pid, start: startOf(process.pid) } satisfies Owner));
      } finally {
        await handle.close();
      }
      held.add(lockFile);
      return async () => {
        held.delete(lockFile);
        await unlink(lockFile).catch(() => {});
      };
    } catch (error) {
      if (error instanceof StoreError) throw error;
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        await unlink(lockFile).catch(() => {});
        throw cannotWrite(lockFile, error);
      }
      const owner = parseOwner(await readFile(lockFile, 'utf8').catch(() => ''));
      if (owner && owner.pid !== process.pid && holds(owner)) throw inUse(dataFile, lockFile, owner.pid);
      await unlink(lockFile).catch(() => {});
    }
  }
  throw new StoreError(`Cannot lock ${dataFile}: remove ${lockFile} if no svc serve is running.`, lockFile);
}

function inUse(dataFile: string, lockFile: string, pid: number): StoreError {
  return new StoreError(
    `${dataFile} is in use by another svc serve (pid ${pid}). Stop it, or give another options.data ` +
      `(if pid ${pid} is no svc, remove ${lockFile}).`,
    lockFile,
  );
}

/** The lock's owner: `{"pid","start"}`, or a bare pid as svc wrote it before; undefined if neither. */
function parseOwner(text: string): Owner | undefined {
  if (/^\d+$/.test(text.trim())) return { pid: Number(text.trim()), start: null };
  try {
    const owner = JSON.parse(text) as Partial<Owner>;
    if (Number.isInteger(owner.pid) && (owner.pid ?? 0) > 0)
      return { pid: owner.pid!, start: typeof owner.start === 'string' ? owner.start : null };
  } catch {
    // not a lock svc wrote: nobody holds it
  }
  return undefined;
}

/** Whether the process the lock names still holds it: alive, and the very process that wrote it. */
function holds(owner: Owner): boolean {
  if (!isAlive(owner.pid)) return false;
  const start = startOf(owner.pid);
  // Another process start time: the pid was reused by a process that never took the lock.
  if (owner.start !== null && start !== null) return start === owner.start;
  // A lock without a start time (an older svc): any svc runs on node, so another program does not hold it.
  const command = commandOf(owner.pid);
  return command === null || /node|svc/i.test(command);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Field 22 of /proc/<pid>/stat, the process's start in clock ticks after boot; null without /proc. */
function startOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after its end.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function commandOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return null;
  }
}
