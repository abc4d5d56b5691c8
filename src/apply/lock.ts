import { makeDirectory } from '../lib/make-directory.js';
import path from 'node:path';
import { DIR_MODE } from '../lib/durable-file.js';
import { tryLockFile } from '../lib/file-lock.js';
import { ApplyError } from './errors.js';

/** How long an apply waits for another one of the same folder to finish before it gives up. */
export const APPLY_LOCK_WAIT_MS = 60_000;
const POLL_MS = 50;

/**
 * `.svc/apply.lock` beside svc.yaml, held from reading the state to writing it: two applies of one
 * folder (`svc serve --config` applying at start while CI runs `svc apply`, two terminals) take
 * turns, so the second plans against what the first did instead of creating it again. A lock
 * whose process is gone is taken over. Resolves to the release (idempotent).
 */
export async function lockApply(
  configDir: string,
  waitMs = APPLY_LOCK_WAIT_MS,
  signal?: AbortSignal,
): Promise<() => Promise<void>> {
  const dir = path.join(configDir, '.svc');
  const file = path.join(dir, 'apply.lock');
  const deadline = performance.now() + waitMs;
  for (;;) {
    let taken: Awaited<ReturnType<typeof tryLockFile>>;
    try {
      await makeDirectory(dir, DIR_MODE);
      taken = await tryLockFile(file);
    } catch (error) {
      throw new ApplyError(`Cannot lock ${file}: ${(error as Error).message}`);
    }
    if ('release' in taken) return taken.release;
    if (performance.now() >= deadline || signal?.aborted) {
      const who = taken.heldBy === process.pid ? 'this process' : `pid ${taken.heldBy}`;
      throw new ApplyError(
        `Another apply of ${configDir} (${who}) is still running after ${Math.round(waitMs / 1000)} s; ` +
          `try again when it ends (if no svc is running, remove ${file}).`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
