import { open, rename, unlink } from 'node:fs/promises';

/** Files and folders of the store hold secrets (key hashes, sealed token data): owner only. */
export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;

/**
 * The file operations through which every store write reaches the disk. The default is node:fs;
 * a test passes a wrapper that makes chosen operations fail (a full or read-only disk) to check
 * that a failed write leaves no trace. Reads do not go through it: a failed read stops the open.
 */
export interface StoreFileSystem {
  /** Creates `file` (it must not exist) with `text`, mode 0600, and flushes it to the disk. */
  writeNew(file: string, text: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  unlink(file: string): Promise<void>;
  /** Makes the renames and removals in `dir` durable: the folder entry itself must reach the disk. */
  syncDir(dir: string): Promise<void>;
}

export const nodeFileSystem: StoreFileSystem = {
  async writeNew(file, text) {
    const handle = await open(file, 'wx', FILE_MODE);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
  rename,
  unlink,
  async syncDir(dir) {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
};

/** What an errno means to someone who has to fix it. */
const CAUSES: Record<string, string> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EIO: 'an input/output error of the disk',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files',
  ENOTDIR: 'a part of the path is a file, not a folder',
  EISDIR: 'a folder stands where a file must go',
};

/** `the disk is full (ENOSPC)`; the error's own message when its code is not one of the usual. */
export function describeCause(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const cause = code === undefined ? undefined : CAUSES[code];
  if (cause !== undefined) return `${cause} (${code})`;
  return error instanceof Error ? error.message : String(error);
}

/** How to get past a cause, where there is something to do. */
export function remedyFor(error: unknown): string {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return 'free some disk space';
    case 'EROFS':
      return 'make the data folder writable (or pass another --data path, or --in-memory)';
    case 'EACCES':
    case 'EPERM':
      return 'give the user running svc write access to the data folder';
    default:
      return 'fix the cause';
  }
}
