import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { syncDir } from '../lib/durable-file.js';

/**
 * Writes a file atomically and durably: a temp file beside it (with `mode`, fsynced), renamed over
 * it, then the folder fsynced, so that a crash leaves the old file or the new one, never half of
 * one, and a write that resolved stays written (keys.json: a key saved is never lost). The folder
 * is made if need be (owner-only when the file is, as `.svc/` is).
 */
export async function writeFileAtomic(file: string, text: string, mode = 0o644): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: mode === 0o600 ? 0o700 : 0o755 });
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(temp, 'wx', mode);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    // The umask may have narrowed the mode: set it exactly.
    await chmod(temp, mode);
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
  await syncDir(path.dirname(file));
}

/** A JSON file's value, or undefined when there is no file; damage throws `damaged(reason)`. */
export async function readJsonFile(file: string, damaged: (reason: string) => Error): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw damaged((error as Error).message);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw damaged((error as Error).message);
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
