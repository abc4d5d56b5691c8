import { spawnSync } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, test } from 'vitest';
import { runApply } from '../../src/apply/index.js';
import { lockApply } from '../../src/apply/lock.js';
import { ApiClient } from '../../src/client/index.js';
import { startEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

async function project() {
  const emu = await startEmulator({ inMemory: true });
  const cwd = await tempDir();
  await writeFile(path.join(cwd, 'svc.yaml'), 'reactors:\n  charge:\n    code: charge.js\n');
  await writeFile(path.join(cwd, 'charge.js'), 'module.exports = async () => ({ raw: 1 });\n');
  const client = new ApiClient({ baseUrl: emu.url, managementKey: emu.managementKey });
  return { emu, cwd, apply: () => runApply({ client, file: 'svc.yaml', cwd, env: {} }) };
}

test('two applies of one folder at once take turns: one creates, the other plans no change', async () => {
  const { emu, cwd, apply } = await project();
  const [first, second] = await Promise.all([apply(), apply()]);
  const statuses = [first.result?.status, second.result?.status].sort();
  expect(statuses).toEqual(['applied', 'no-changes']);
  expect((await emu.call('GET', '/reactors')).body.data.map((reactor: { name: string }) => reactor.name)).toEqual([
    'charge',
  ]);
  // The lock is gone once both are done.
  expect(await readdir(path.join(cwd, '.svc'))).not.toContain('apply.lock');
});

test("a lock left by a process that is gone is taken over; a live one's is waited for, then refused", async () => {
  const { cwd, apply } = await project();
  await mkdir(path.join(cwd, '.svc'), { recursive: true });
  const lockFile = path.join(cwd, '.svc', 'apply.lock');
  // A pid that existed and ended: a child that exits at once.
  const gone = spawnSync(process.execPath, ['-e', '0']).pid;
  await writeFile(lockFile, JSON.stringify({ pid: gone, start: null }));
  expect((await apply()).result?.status).toBe('applied');

  const release = await lockApply(cwd);
  await expect(lockApply(cwd, 150)).rejects.toThrow(/Another apply of .* \(this process\) is still running after 0 s/);
  await release();
  const again = await lockApply(cwd, 150);
  await again();
});
