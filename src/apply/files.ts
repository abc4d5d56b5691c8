import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { syncDir } from '../lib/durable-file.js';
import { UnreadableFileError } from '../resources/errors.js';
import { readRegularFile } from '../resources/files.js';

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

/** How large a file of svc's own (.svc/state.json, keys.json, a saved plan) may be. */
const OWN_FILE_LIMIT = 64 * 1024 * 1024;

/**
 * A JSON file's value, or undefined when there is no file; damage throws `damaged(reason)`. Read as
 * any file svc reads is (resources/files.ts): a regular file of a bounded size, so that a FIFO or a
 * device put in its place is refused rather than hang or fill the apply, and never echoed back.
 */
export async function readJsonFile(file: string, damaged: (reason: string) => Error): Promise<unknown> {
  let text: string;
  try {
    text = await readRegularFile(file, 'svc', { maxBytes: OWN_FILE_LIMIT });
  } catch (error) {
    const cause = (error as Error).cause as NodeJS.ErrnoException | undefined;
    if (cause?.code === 'ENOENT') return undefined;
    throw damaged(error instanceof UnreadableFileError ? error.reason : (error as Error).message);
  }
  try {
    return JSON.parse(text);
  } catch {
    // Not the parser's message: it quotes the text, which is not always svc's own (a file put there).
    throw damaged('it is not valid JSON');
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
