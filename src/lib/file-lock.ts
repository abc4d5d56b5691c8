import { randomBytes } from 'node:crypto';
import { constants, readFileSync } from 'node:fs';
import { link, lstat, open, unlink, writeFile } from 'node:fs/promises';
import { FILE_MODE } from './durable-file.js';

/**
 * Lock files this process holds. A lock file names a process, so two holders in one process (two
 * emulators in tests, two applies of one folder) need this to tell their own live lock from a stale one.
 */
const held = new Set<string>();

/** What a lock file records: who holds it, and when that process started (to tell a reused pid). */
interface Owner {
  pid: number;
  /** The start time of the process in clock ticks after boot (Linux /proc), or null where unknown. */
  start: string | null;
}

/**
 * Takes the advisory lock `file` (0600, naming this process) if nobody holds it: resolves to its
 * release, or to the pid of the live process that holds it (this one's, when held here; 0 when
 * another takes it at the same moment). A lock left by a process that is gone, or whose pid now
 * belongs to another program (a reboot or a container restart reuses pids), is taken over. Other
 * failures (no such folder, no permission) reject with the error of the file system.
 */
export async function tryLockFile(file: string): Promise<{ release: () => Promise<void> } | { heldBy: number }> {
  // Claimed here before any await: two takers in this process never both get past this line.
  if (held.has(file)) return { heldBy: process.pid };
  held.add(file);
  try {
    for (let attempt = 0; attempt < 2; attempt++) {
      if (await createNamingThisProcess(file)) {
        let released = false;
        return {
          release: async () => {
            if (released) return;
            released = true;
            held.delete(file);
            await unlink(file).catch(() => {});
          },
        };
      }
      const owner = parseOwner(await readLock(file));
      if (owner && owner.pid !== process.pid && holds(owner)) {
        held.delete(file);
        return { heldBy: owner.pid };
      }
      await unlink(file).catch(() => {});
    }
    held.delete(file);
    return { heldBy: 0 };
  } catch (error) {
    held.delete(file);
    throw error;
  }
}

/**
 * Creates `file` whole or not at all: the owner is written to a file of its own, then linked to the
 * lock's name, which fails if that exists. A lock is never seen empty, as one being written would be
 * (and then taken for a stale one). Resolves to whether this call created it.
 */
async function createNamingThisProcess(file: string): Promise<boolean> {
  const owner: Owner = { pid: process.pid, start: startOf(process.pid) };
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    await writeFile(temporary, JSON.stringify(owner), { mode: FILE_MODE, flag: 'wx' });
    await link(temporary, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(temporary).catch(() => {});
  }
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

/**
 * A lock file's text: '' unless it is a small regular file (a FIFO put in its place would hang the
 * read, a device never end; either is then no owner, and is replaced).
 */
async function readLock(file: string): Promise<string> {
  const stats = await lstat(file).catch(() => undefined);
  if (!stats?.isFile() || stats.size > 4096) return '';
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK).catch(() => undefined);
  if (!handle) return '';
  try {
    return (await handle.readFile('utf8')).slice(0, 4096);
  } catch {
    return '';
  } finally {
    await handle.close();
  }
}
