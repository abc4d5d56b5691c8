import { spawn } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { tryLockFile } from '../../src/lib/file-lock.js';
import { tempDir } from '../helpers/temp.js';

const LOCK_MODULE = fileURLToPath(new URL('../../dist/lib/file-lock.js', import.meta.url));

test('of many takers in one process at once, exactly one gets the lock; once released it can be taken again', async () => {
  const file = path.join(await tempDir(), 'x.lock');
  const taken = await Promise.all(Array.from({ length: 20 }, () => tryLockFile(file)));
  const winners = taken.filter((result) => 'release' in result);
  expect(winners).toHaveLength(1);
  expect(taken.filter((result) => 'heldBy' in result && result.heldBy === process.pid)).toHaveLength(19);
  await (winners[0] as { release: () => Promise<void> }).release();
  const again = await tryLockFile(file);
  expect('release' in again).toBe(true);
  if ('release' in again) await again.release();
  // No temporary file of a taker is left behind.
  expect(await readdir(path.dirname(file))).toEqual([]);
});

test('of several processes taking it at the same moment, exactly one gets it (a lock is never seen half written)', async () => {
  const file = path.join(await tempDir(), 'x.lock');
  const script = `
    const { tryLockFile } = await import(${JSON.stringify(LOCK_MODULE)});
    const taken = await tryLockFile(${JSON.stringify(file)});
    process.stdout.write('release' in taken ? 'won' : 'lost');
    if ('release' in taken) setTimeout(() => taken.release(), 1000);
  `;
  const results = await Promise.all(
    Array.from(
      { length: 6 },
      () =>
        new Promise<string>((resolve) => {
          const child = spawn(process.execPath, ['--input-type=module', '-e', script]);
          let out = '';
          child.stdout.on('data', (chunk) => (out += chunk));
          child.on('exit', () => resolve(out));
        }),
    ),
  );
  expect(results.filter((result) => result === 'won')).toHaveLength(1);
  expect(results.filter((result) => result === 'lost')).toHaveLength(5);
});

test('a lock naming no live process (a garbage file, a dead pid) is taken over', async () => {
  const file = path.join(await tempDir(), 'x.lock');
  await writeFile(file, 'not a lock');
  const taken = await tryLockFile(file);
  expect('release' in taken).toBe(true);
  if ('release' in taken) await taken.release();
});
