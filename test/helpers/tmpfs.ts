import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished, type TestContext } from 'vitest';

/**
 * A real small disk: a tmpfs of `sizeKb` mounted on a fresh folder, for full-disk and read-only
 * tests. Mounting needs root and the right to mount; where that is refused the test is skipped,
 * with the reason shown. Unmounted (lazily, so that servers still closing do not block it) and
 * removed when the test ends.
 */
export async function mountTmpfs(context: TestContext, sizeKb: number): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-tmpfs-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKb}k,mode=0700`, 'tmpfs', dir], {
    encoding: 'utf8',
  });
  if (mounted.status !== 0) {
    await rm(dir, { recursive: true, force: true });
    const why = (mounted.stderr || mounted.error?.message || `exit ${mounted.status}`).trim();
    context.skip(`cannot mount a tmpfs here (${why}); this test needs root with the right to mount`);
  }
  onTestFinished(async () => {
    spawnSync('umount', ['-l', dir]);
    await rm(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Remounts a tmpfs read-only (or writable again). */
export function remount(dir: string, mode: 'ro' | 'rw'): void {
  const result = spawnSync('mount', ['-o', `remount,${mode}`, dir], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`remount ${mode} failed: ${result.stderr}`);
}
