import { makeDirectory } from './make-directory.js';
import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';

/** Files and folders written here hold secrets (keys, key hashes, sealed token data): owner only. */
export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;

/**
 * The file operations through which every durable write reaches the disk. The default is node:fs;
 * a test passes a wrapper that makes chosen operations fail (a full or read-only disk) to check
 * that a failed write leaves no trace. Reads do not go through it.
 */
export interface DurableFileSystem {
  /** Creates `file` (it must not exist) with `text`, mode 0600, and flushes it to the disk. */
  writeNew(file: string, text: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  unlink(file: string): Promise<void>;
  /** Makes the renames and removals in `dir` durable: the folder entry itself must reach the disk. */
  syncDir(dir: string): Promise<void>;
}

/**
 * Creates `file` (it must not exist) with `text` and `mode`, flushed to the disk. `exact`: the mode
 * is set again after the create, which the umask may have narrowed (a 0644 file svc writes for git).
 */
async function writeNewFile(file: string, text: string, mode: number, exact = false): Promise<void> {
  const handle = await open(file, 'wx', mode);
  try {
    await handle.writeFile(text);
    if (exact) await handle.chmod(mode);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export const nodeFileSystem: DurableFileSystem = {
  writeNew: (file, text) => writeNewFile(file, text, FILE_MODE),
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

/** The name of a write's temp file: hidden, beside its target, ending in `.tmp` (see isTempFile). */
const TEMP_NAME = /^\..+\.[0-9a-f]{12}\.tmp$/;

/**
 * A JSON file whose write is atomic and durable: the JSON goes to a fresh temp file (0600), is
 * fsynced, renamed over the target, and the folder is fsynced, so `write()` resolves only once the
 * new content is on disk, and a crash leaves either the old file or the new one, never half. A
 * write that fails leaves the target as it was and removes its temp file. (lowdb's own JSONFile
 * renames but does not fsync, and creates files with the umask's mode.) Used by the emulator's
 * store and by the CLI's config file.
 */
export class DurableJsonFile<T> {
  constructor(
    readonly file: string,
    private readonly fs: DurableFileSystem = nodeFileSystem,
    /** Pretty-printed with this many spaces (a file people diff: `svc state export`); compact by default. */
    private readonly indent?: number,
  ) {}

  async write(data: T): Promise<void> {
    await this.replace(data);
    await this.fs.syncDir(path.dirname(this.file));
  }

  /**
   * The write without its folder's fsync: the rename is atomic but not yet durable. For writes of
   * many files in one folder, which then make the folder durable once (see syncDir).
   */
  async replace(data: T): Promise<void> {
    // Stringify before the first await: the snapshot is the data as it was when write() was called.
    const text = this.indent === undefined ? JSON.stringify(data) : `${JSON.stringify(data, null, this.indent)}\n`;
    await replaceFile(this.file, (temp) => this.fs.writeNew(temp, text), this.fs);
  }
}

/**
 * A text file written atomically and durably as DurableJsonFile's JSON is, with `mode` set exactly
 * (svc apply's files: svc.yaml and code that `svc import` writes are 0644, `.svc/` state and keys
 * 0600). Its folder is made if need be, owner only when the file is.
 */
export async function writeFileDurably(file: string, text: string, mode: number): Promise<void> {
  const dir = path.dirname(file);
  await makeDirectory(dir, mode === FILE_MODE ? DIR_MODE : 0o755);
  await replaceFile(file, (temp) => writeNewFile(temp, text, mode, true), nodeFileSystem);
  await syncDir(dir);
}

/**
 * The one way a file is replaced: its content goes to a fresh temp file beside it, which is renamed
 * over it. A write that fails leaves the target as it was and removes its temp file.
 */
async function replaceFile(
  file: string,
  writeNew: (temp: string) => Promise<void>,
  fs: DurableFileSystem,
): Promise<void> {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeNew(temp);
    await fs.rename(temp, file);
  } catch (error) {
    // Whatever step failed, the temp file is of no use; left behind it would pile up beside the target.
    await fs.unlink(temp).catch(() => {});
    throw error;
  }
}

/** Whether a file name is that of a write's temp file (left behind only by a crash mid-write). */
export function isTempFile(name: string): boolean {
  return TEMP_NAME.test(name);
}

/** Makes a rename or a removal durable: the folder entry itself must reach the disk. */
export async function syncDir(dir: string, fs: DurableFileSystem = nodeFileSystem): Promise<void> {
  await fs.syncDir(dir);
}

/** Creates `dir` and its parents, owner only. */
export async function ensureDir(dir: string): Promise<void> {
  await makeDirectory(dir, DIR_MODE);
}
