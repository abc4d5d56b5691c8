import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, test } from 'vitest';
import { importTarget, runApply } from '../../src/apply/index.js';
import { ApiClient } from '../../src/client/index.js';
import { startEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

/** Names every object has (`__proto__`, `constructor`) are names like any other. */
const NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'];

test('Applications, reactors and proxies named __proto__, constructor, prototype... are created once, then converge', async () => {
  const emu = await startEmulator({ inMemory: true });
  const cwd = await tempDir();
  const section = (body: string) => NAMES.map((name) => `  ${JSON.stringify(name)}:\n${body}`).join('');
  await writeFile(
    path.join(cwd, 'svc.yaml'),
    `applications:\n${section('    type: private\n    permissions: [token:use]\n')}` +
      `reactors:\n${section('    code: r.js\n    application: __proto__\n    configuration: { constructor: y }\n')}` +
      `proxies:\n${section('    destination_url: https://example.com\n')}`,
  );
  await writeFile(path.join(cwd, 'r.js'), 'module.exports = async () => ({ raw: 1 });\n');
  const client = new ApiClient({ baseUrl: emu.url, managementKey: emu.managementKey });
  const apply = () => runApply({ client, file: 'svc.yaml', cwd, env: {} });

  const first = await apply();
  expect(first.result?.status, JSON.stringify(first.result?.outcomes.filter((o) => o.status !== 'applied'))).toBe(
    'applied',
  );
  expect(first.prepared.plan.changes.map((change) => change.action)).toEqual(Array(15).fill('create'));
  const second = await apply();
  expect(second.prepared.plan.changes).toEqual([]);
  expect(second.result?.status).toBe('no-changes');

  const keys = JSON.parse(await readFile(path.join(cwd, '.svc', 'keys.json'), 'utf8'));
  const saved = Object.values(Object.values(keys.targets)[0] as object)[0] as Record<string, unknown>;
  expect(Object.keys(saved).sort()).toEqual([...NAMES].sort());
  const reactors = (await emu.call('GET', '/reactors?size=100')).body.data as { name: string }[];
  expect(reactors.map((reactor) => reactor.name).sort()).toEqual([...NAMES].sort());

  // A configuration key named `constructor` goes when svc.yaml drops it.
  const yaml = await readFile(path.join(cwd, 'svc.yaml'), 'utf8');
  await writeFile(path.join(cwd, 'svc.yaml'), yaml.replaceAll('{ constructor: y }', '{ other: z }'));
  const third = await apply();
  const fields = third.prepared.plan.changes.flatMap((change) => change.diffs.map((diff) => diff.field));
  expect(fields).toContain('configuration.constructor');
  expect((await apply()).prepared.plan.changes).toEqual([]);

  // Imported into another folder, the same names make a svc.yaml that plans nothing.
  const other = await tempDir();
  await importTarget({ client, out: 'svc.yaml', cwd: other });
  const imported = await runApply({ client, file: 'svc.yaml', cwd: other, env: {}, dryRun: true });
  expect(imported.prepared.plan.changes).toEqual([]);
});
