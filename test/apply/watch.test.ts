import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, onTestFinished, test } from 'vitest';
import { prepareApply, watchConfig, type WatchEvent } from '../../src/apply/index.js';
import type { Desired } from '../../src/apply/types.js';
import { ApiClient } from '../../src/client/index.js';
import { runSvc } from '../helpers/cli.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { eventually, sleep } from '../helpers/wait.js';

const V1 = 'module.exports = async () => ({ raw: { version: 1 } });\n';
const V2 = 'module.exports = async () => ({ raw: { version: 2 } });\n';
const BROKEN = 'module.exports = async () => {\n  return { raw: ( };\n};\n';
const SVC_YAML = 'reactors:\n  charge:\n    code: charge.js\n';

async function setup() {
  const emu = await startEmulator({ inMemory: true });
  const cwd = await tempDir();
  const write = async (file: string, text: string) => {
    await mkdir(path.dirname(path.join(cwd, file)), { recursive: true });
    await writeFile(path.join(cwd, file), text);
  };
  await write('svc.yaml', SVC_YAML);
  await write('charge.js', V1);
  const client = new ApiClient({ baseUrl: emu.url, managementKey: emu.managementKey });
  return { emu, cwd, write, client };
}

/** The reactor's code as the server holds it, and how many PATCH/PUT/POST reached the reactors. */
async function serverCode(emu: TestEmulator): Promise<string> {
  return (await emu.call('GET', '/reactors')).body.data[0].code;
}

function writes(emu: TestEmulator): number {
  return emu.events.filter(
    (event) => event.type === 'request' && event.method !== 'GET' && event.path.startsWith('/reactors'),
  ).length;
}

/** svc.yaml applied; resolves to what was applied. */
async function applied(client: ApiClient, cwd: string): Promise<Desired> {
  const prepared = await prepareApply({ client, file: 'svc.yaml', cwd, env: {} });
  await prepared.apply();
  return prepared.desired;
}

/** Watches svc.yaml as applied (`desired`) until the test ends; resolves, once watching, to the events so far and to come. */
async function watchApplied(
  client: ApiClient,
  cwd: string,
  desired: Desired,
  options: { prune?: boolean } = {},
): Promise<WatchEvent[]> {
  const events: WatchEvent[] = [];
  const watcher = watchConfig({
    client,
    file: 'svc.yaml',
    cwd,
    env: {},
    ...options,
    applied: desired,
    onEvent: (event) => events.push(event),
  });
  onTestFinished(() => watcher.close());
  await watcher.ready;
  return events;
}

describe('watchConfig', () => {
  test('a saved code file is applied as one PATCH; a save of the same contents sends nothing; a syntax error is reported at its line and sends nothing', async () => {
    const { emu, cwd, write, client } = await setup();
    const events = await watchApplied(client, cwd, await applied(client, cwd));
    expect(events).toEqual([{ type: 'watching', files: [path.join(cwd, 'svc.yaml'), path.join(cwd, 'charge.js')] }]);
    const before = writes(emu);

    await write('charge.js', V2);
    const change = await eventually(() => {
      const found = events.find((event) => event.type === 'change');
      if (!found) throw new Error('no change yet');
      return found;
    });
    expect(events.filter((event) => event.type !== 'watching')).toEqual([change]);
    expect(change).toMatchObject({
      type: 'change',
      fields: ['code'],
      change: { action: 'update', address: 'reactors.charge' },
      outcome: { status: 'applied' },
    });
    expect(await serverCode(emu)).toBe(V2);
    const patches = emu.events.filter((event) => event.type === 'request' && event.method === 'PATCH');
    expect(patches).toHaveLength(1);
    expect(writes(emu) - before).toBe(1);

    // The same contents again (an editor's save without an edit, a formatter): nothing at all.
    const settled = events.length;
    await write('charge.js', V2);
    await write('svc.yaml', SVC_YAML);
    await sleep(300);
    expect(events.slice(settled)).toEqual([]);
    expect(writes(emu) - before).toBe(1);

    await write('charge.js', BROKEN);
    await eventually(() =>
      expect(events).toContainEqual({
        type: 'held',
        address: 'reactors.charge',
        message: 'charge.js:2:19 Unexpected token (reactors.charge.code)',
        kept: true,
      }),
    );
    expect(await serverCode(emu)).toBe(V2);
    expect(writes(emu) - before).toBe(1);
  });

  test('a save made after the apply read the files but before they were watched is applied once watching', async () => {
    const { emu, cwd, write, client } = await setup();
    const desired = await applied(client, cwd);
    // Saved between the apply and the start of watching: no file event will ever say so.
    await write('charge.js', V2);
    const events = await watchApplied(client, cwd, desired);
    await eventually(async () => expect(await serverCode(emu)).toBe(V2));
    expect(events.filter((event) => event.type === 'change')).toHaveLength(1);
  });

  test('an empty svc.yaml (a save caught between truncating and writing) is never applied: nothing is removed', async () => {
    const { emu, cwd, write, client } = await setup();
    const events = await watchApplied(client, cwd, await applied(client, cwd));
    const before = emu.events.length;
    await write('svc.yaml', '');
    await eventually(() =>
      expect(events).toContainEqual({
        type: 'invalid',
        message: 'svc.yaml is empty: not applied while watching (`svc apply` applies an empty file).',
      }),
    );
    expect(emu.events.slice(before).filter((event) => event.type === 'request' && event.method === 'DELETE')).toEqual(
      [],
    );
    expect(await serverCode(emu)).toBe(V1);

    await write('svc.yaml', SVC_YAML);
    await write('charge.js', V2);
    await eventually(async () => expect(await serverCode(emu)).toBe(V2));
    expect((await emu.call('GET', '/reactors')).body.data).toHaveLength(1);
  });

  test('a syntax error in svc.yaml is reported at line:column; the next good save applies', async () => {
    const { emu, cwd, write, client } = await setup();
    const events = await watchApplied(client, cwd, await applied(client, cwd));

    await write('svc.yaml', `${SVC_YAML}    configuration: [oops\n`);
    await eventually(() =>
      expect(
        events.some((event) => event.type === 'invalid' && /^svc\.yaml:\d+:\d+ Flow sequence/.test(event.message)),
      ).toBe(true),
    );
    await write('svc.yaml', `${SVC_YAML}    configuration:\n      MODE: live\n`);
    await eventually(() =>
      expect(events.some((event) => event.type === 'change' && event.fields.includes('configuration'))).toBe(true),
    );
    expect((await emu.call('GET', '/reactors')).body.data[0].configuration).toEqual({ MODE: 'live' });
  });

  test('a code file svc.yaml names before it exists is applied once it is written', async () => {
    const { emu, cwd, write, client } = await setup();
    const events = await watchApplied(client, cwd, await applied(client, cwd));

    await write('svc.yaml', `${SVC_YAML}  refund:\n    code: refund.js\n`);
    await eventually(() =>
      expect(
        events.some((event) => event.type === 'held' && !event.kept && event.message.includes('cannot read refund.js')),
      ).toBe(true),
    );
    await sleep(100);
    await write('refund.js', V1);
    const names = async () =>
      (await emu.call('GET', '/reactors')).body.data.map((reactor: { name: string }) => reactor.name);
    await eventually(async () => expect((await names()).sort()).toEqual(['charge', 'refund']));
  });
});

describe('watchConfig: a broken code file holds back only its own resource', () => {
  test('a save that adds a reactor while another file is broken applies the new one; the broken one keeps its code, even with prune', async () => {
    const { emu, cwd, write, client } = await setup();
    const events = await watchApplied(client, cwd, await applied(client, cwd), { prune: true });
    await write('charge.js', BROKEN);
    await eventually(() => expect(events.some((event) => event.type === 'held')).toBe(true));
    await write('refund.js', V2);
    await write('svc.yaml', `${SVC_YAML}  refund:\n    code: refund.js\n`);
    const reactors = async () =>
      (await emu.call('GET', '/reactors')).body.data.map((reactor: { name: string; code: string }) => [
        reactor.name,
        reactor.code,
      ]);
    await eventually(async () =>
      expect((await reactors()).sort()).toEqual([
        ['charge', V1],
        ['refund', V2],
      ]),
    );
    expect(events).toContainEqual({
      type: 'held',
      address: 'reactors.charge',
      message: 'charge.js:2:19 Unexpected token (reactors.charge.code)',
      kept: true,
    });
    expect(events.some((event) => event.type === 'invalid')).toBe(false);
    // Mended: its code goes up.
    await write('charge.js', V2);
    await eventually(async () =>
      expect((await reactors()).sort()).toEqual([
        ['charge', V2],
        ['refund', V2],
      ]),
    );
  });

  test('svc.yaml broken, then put back as it was: the fix is said (no-changes, fixed), with nothing sent', async () => {
    const { emu, cwd, write, client } = await setup();
    const events = await watchApplied(client, cwd, await applied(client, cwd));
    const before = writes(emu);
    await write('svc.yaml', `${SVC_YAML}    application: nope\n`);
    await eventually(() => expect(events.some((event) => event.type === 'invalid')).toBe(true));
    await write('svc.yaml', SVC_YAML);
    await eventually(() => expect(events).toContainEqual(expect.objectContaining({ type: 'no-changes', fixed: true })));
    expect(writes(emu)).toBe(before);
  });
});

describe('svc apply --watch', () => {
  test('a first apply with a broken code file creates the rest and says the broken one is not created; mending it creates it', async () => {
    const { emu, cwd, write } = await setup();
    await write('svc.yaml', `${SVC_YAML}  refund:\n    code: refund.js\n`);
    await write('refund.js', BROKEN);
    const controller = new AbortController();
    const running = runSvc(['apply', '--watch', '--base-url', emu.url, '--management-key', emu.managementKey], {
      cwd,
      signal: controller.signal,
    });
    const names = async () =>
      (await emu.call('GET', '/reactors')).body.data.map((reactor: { name: string }) => reactor.name);
    await eventually(async () => expect(await names()).toEqual(['charge']));
    await sleep(200);
    await write('refund.js', V2);
    await eventually(async () => expect((await names()).sort()).toEqual(['charge', 'refund']));
    controller.abort();
    const result = await running;
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      'reactors.refund held back, not created: refund.js:2:19 Unexpected token (reactors.refund.code)',
    );
    expect(result.stdout).toMatch(/reactors\.refund code created \(\d+ ms\)/);
  });

  test('a broken save, then the fix that puts the files back as applied, prints that it is fixed', async () => {
    const { emu, cwd, write } = await setup();
    const controller = new AbortController();
    const running = runSvc(['apply', '--watch', '--base-url', emu.url, '--management-key', emu.managementKey], {
      cwd,
      signal: controller.signal,
    });
    await eventually(async () => expect((await emu.call('GET', '/reactors')).body.data).toHaveLength(1));
    await sleep(200);
    await write('svc.yaml', `${SVC_YAML}    colour: red\n`);
    await sleep(500);
    await write('svc.yaml', SVC_YAML);
    await sleep(500);
    controller.abort();
    const result = await running;
    expect(result.stderr).toContain('svc.yaml:4:5 reactors.charge.colour: unknown key "colour"');
    expect(result.stdout).toMatch(/Fixed: svc\.yaml loads again, as last applied; no changes \(\d+ ms\)\./);
  });

  test('applies, then a line per saved change, until the signal stops it (exit 0)', async () => {
    const { emu, cwd, write } = await setup();
    const controller = new AbortController();
    const running = runSvc(['apply', '--watch', '--base-url', emu.url, '--management-key', emu.managementKey], {
      cwd,
      signal: controller.signal,
    });
    await eventually(async () => expect((await emu.call('GET', '/reactors')).body.data).toHaveLength(1));
    await sleep(200);
    await write('charge.js', V2);
    await eventually(async () => expect(await serverCode(emu)).toBe(V2));
    controller.abort();
    const result = await running;
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('reactors.charge created');
    expect(result.stdout).toMatch(/reactors\.charge code updated \(\d+ ms\)/);
    expect(result.stderr).toContain('Watching 2 files (svc.yaml and what it names); Ctrl-C stops.');
  });
});
