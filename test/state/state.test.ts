import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { writeStateFile } from '../../src/cli/commands/state/file.js';
import { nodeFileSystem } from '../../src/lib/durable-file.js';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/state-v1.json', import.meta.url));
const FIXTURE_KEY = 'key_local_pvt_FixtureFixtureFixture12';
const PASS = { SVC_STATE_PASSPHRASE: 'correct horse battery staple' };
const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2035 };
const GREET = 'module.exports = async (req) => ({ raw: { hello: req.configuration.WHO } });\n';
const UPPER = 'module.exports = async (req) => ({ body: String(req.body).toUpperCase() });\n';

async function setup() {
  const emu = await startEmulator({ inMemory: true });
  const cwd = await tempDir();
  const target = ['--base-url', emu.url, '--management-key', emu.managementKey, '--api-key', emu.privateKey];
  const svc = (args: string[], env: Record<string, string> = PASS) => runSvc([...args, ...target], { cwd, env });
  return { emu, cwd, target, svc };
}

/** A tenant with one of everything: an Application (its key returned), a reactor, a proxy, tokens. */
async function populate(emu: TestEmulator) {
  const app = await emu.call('POST', '/applications', {
    body: {
      name: 'checkout',
      type: 'private',
      permissions: ['token:create', 'token:read', 'token:use'],
      rules: [
        {
          priority: 1,
          container: '/pci/',
          permissions: ['token:read', 'token:use'],
          transform: 'reveal',
        },
      ],
    },
  });
  expect(app.status, app.text).toBe(201);
  const reactor = await emu.call('POST', '/reactors', {
    body: { name: 'greet', code: GREET, configuration: { WHO: 'world' }, application: { id: app.body.id } },
  });
  expect(reactor.status, reactor.text).toBe(201);
  const proxy = await emu.call('POST', '/proxies', {
    body: {
      name: 'upper',
      destination_url: 'http://127.0.0.1:9/',
      request_transform: { code: UPPER },
      configuration: { API_KEY: 'sk_live_hidden' },
    },
  });
  expect(proxy.status, proxy.text).toBe(201);
  const token = await emu.call('POST', '/tokens', {
    key: emu.privateKey,
    body: { type: 'card', data: CARD, containers: ['/pci/'], metadata: { who: 'ann' } },
  });
  expect(token.status, token.text).toBe(201);
  return {
    appKey: app.body.key as string,
    appId: app.body.id,
    reactorId: reactor.body.id,
    proxy: proxy.body,
    token: token.body,
  };
}

/** The tenant's state as the route answers it, without the time it was asked. */
async function stateOf(emu: TestEmulator) {
  const { body } = await emu.call('GET', '/_emulator/state');
  const { exported_at: _at, ...rest } = body;
  return rest;
}

describe('svc state export, reset, import', () => {
  test('round trip: export (sealed) -> reset -> import gives the same state, and old keys work', async () => {
    const { emu, cwd, svc } = await setup();
    const made = await populate(emu);
    const before = await stateOf(emu);
    const exported = await svc(['state', 'export', 'state.json']);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toBe(
      'Exported 3 applications, 1 reactor, 1 proxy, 1 token to state.json (secrets sealed).\n',
    );
    const text = await readFile(path.join(cwd, 'state.json'), 'utf8');
    // Sealed: no card number, no configuration value, no proxy key in the file; pretty, versioned.
    expect(text).not.toContain('4242424242424242');
    expect(text).not.toContain('sk_live_hidden');
    expect(text).not.toContain(made.proxy.key);
    expect(text.startsWith('{\n  "svc_state": 1,\n')).toBe(true);

    const reset = await svc(['state', 'reset', '--yes']);
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toContain('  - reactor greet');
    expect(reset.stdout).toMatch(/= application .* kept: the tenant's bootstrap/);
    const emptied = await stateOf(emu);
    expect(emptied.reactors).toEqual([]);
    expect(emptied.tokens).toEqual([]);
    expect(emptied.applications).toHaveLength(2);
    expect((await emu.call('GET', '/applications', { key: made.appKey })).status).toBe(401);

    const imported = await svc(['state', 'import', 'state.json']);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('Imported from state.json: 4 added, 0 changed, 0 deleted, 2 unchanged.');
    expect(await stateOf(emu)).toEqual(before);
    // The Application's old key, the proxy's key, the reactor's configuration and the token's data are back.
    expect((await emu.call('GET', `/tokens/${made.token.id}`, { key: made.appKey })).status).toBe(200);
    const run = await emu.call('POST', `/reactors/${made.reactorId}/react`, {
      key: emu.privateKey,
      body: { args: {} },
    });
    expect(run.body.raw).toEqual({ hello: 'world' });
  });

  test('into another emulator (another master key): the passphrase opens it; a wrong one is one line', async () => {
    const first = await setup();
    const made = await populate(first.emu);
    expect((await first.svc(['state', 'export', 'state.json'])).code).toBe(0);
    const other = await startEmulator({ inMemory: true });
    const target = ['--base-url', other.url, '--management-key', other.managementKey];
    const wrong = await runSvc(['state', 'import', 'state.json', ...target], {
      cwd: first.cwd,
      env: { SVC_STATE_PASSPHRASE: 'not it' },
    });
    expectOneLineError(
      wrong,
      1,
      /^Error: state\.json cannot be opened: the passphrase does not open it .*nothing changed\.$/,
    );
    const none = await runSvc(['state', 'import', 'state.json', ...target], { cwd: first.cwd });
    expectOneLineError(none, 1, /This state file is sealed: set SVC_STATE_PASSPHRASE/);
    const ok = await runSvc(['state', 'import', 'state.json', ...target], { cwd: first.cwd, env: PASS });
    expect(ok.code, ok.stderr).toBe(0);
    const token = await other.call('GET', `/tokens/${made.token.id}`, { key: made.appKey });
    expect(token.status, token.text).toBe(200);
    expect(token.body.data.number).toBe('4242424242424242');
    const proxy = await other.call('GET', `/proxies/${made.proxy.id}`);
    expect(proxy.body.key).toBe(made.proxy.key);
    expect(proxy.body.configuration).toEqual({ API_KEY: 'sk_live_hidden' });
  });

  test('--plaintext writes secrets in clear with a warning; sealing without a passphrase is refused', async () => {
    const { emu, cwd, svc } = await setup();
    await populate(emu);
    expectOneLineError(
      await svc(['state', 'export', 'state.json'], {}),
      1,
      /needs a passphrase: set SVC_STATE_PASSPHRASE/,
    );
    expect(existsSync(path.join(cwd, 'state.json'))).toBe(false);
    const plain = await svc(['state', 'export', 'state.json', '--plaintext'], {});
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).toMatch(/^Warning: state\.json holds token data, configuration and proxy keys in clear/);
    const doc = JSON.parse(await readFile(path.join(cwd, 'state.json'), 'utf8'));
    expect(doc.tokens[0].data.number).toBe('4242424242424242');
    expect(doc.sealed).toBeUndefined();
    // Stable order: sorted by name, keys in one order.
    expect(doc.applications.map((app: { name: string }) => app.name)).toEqual(
      [...doc.applications.map((app: { name: string }) => app.name)].sort(),
    );
    expect(Object.keys(doc)).toEqual([
      'svc_state',
      'svc_version',
      'exported_at',
      'applications',
      'reactors',
      'proxies',
      'tokens',
    ]);
    const again = await svc(['state', 'import', 'state.json', '--dry-run'], {});
    expect(again.stdout).toBe(
      'Plan from state.json: 0 to add, 0 to change, 0 to delete, 6 unchanged. Nothing changed (--dry-run).\n',
    );
  });

  test('--dry-run changes nothing; without --replace what the file does not name stays; --replace removes it', async () => {
    const { emu, svc } = await setup();
    await populate(emu);
    expect((await svc(['state', 'export', 'state.json'])).code).toBe(0);
    const extra = await emu.call('POST', '/reactors', { body: { name: 'extra', code: GREET, configuration: {} } });
    await emu.call(
      'PATCH',
      `/reactors/${(await stateOf(emu)).reactors.find((r: { name: string }) => r.name === 'greet').id}`,
      {
        body: { configuration: { WHO: 'changed' } },
        contentType: 'application/merge-patch+json',
      },
    );
    const before = await stateOf(emu);
    const plan = await svc(['state', 'import', 'state.json', '--replace', '--dry-run']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('  ~ reactor greet');
    expect(plan.stdout).toContain(`  - reactor extra (${extra.body.id})`);
    expect(plan.stdout).toContain(
      'Plan from state.json: 0 to add, 1 to change, 1 to delete, 5 unchanged. Nothing changed (--dry-run).',
    );
    expect(await stateOf(emu)).toEqual(before);

    const merged = await svc(['state', 'import', 'state.json', '--json']);
    expect(merged.json()).toMatchObject({ dry_run: false, replace: false, unchanged: 5 });
    expect((await stateOf(emu)).reactors.map((r: { name: string }) => r.name)).toEqual(['extra', 'greet']);
    const replaced = await svc(['state', 'import', 'state.json', '--replace']);
    expect(replaced.stdout).toContain('0 added, 0 changed, 1 deleted');
    expect((await stateOf(emu)).reactors.map((r: { name: string }) => r.name)).toEqual(['greet']);
    expect((await emu.call('GET', `/reactors/${extra.body.id}`)).status).toBe(404);
  });

  test('a bad file is one line and changes nothing: bad JSON, a newer version, a damaged seal', async () => {
    const { emu, cwd, svc } = await setup();
    await populate(emu);
    expect((await svc(['state', 'export', 'state.json'])).code).toBe(0);
    const before = await stateOf(emu);
    await svc(['state', 'reset', '--yes']);
    const emptied = await stateOf(emu);
    await writeFile(path.join(cwd, 'bad.json'), '{"svc_state": 1,');
    expectOneLineError(
      await svc(['state', 'import', 'bad.json']),
      1,
      /^Error: bad\.json is not valid JSON .*nothing changed\.$/,
    );
    await writeFile(path.join(cwd, 'v9.json'), JSON.stringify({ svc_state: 9, applications: [] }));
    expectOneLineError(
      await svc(['state', 'import', 'v9.json']),
      1,
      /^Error: v9\.json is of version 9, written by a newer svc .*upgrade svc; nothing changed\.$/,
    );
    await writeFile(path.join(cwd, 'other.json'), JSON.stringify({ hello: 1 }));
    expectOneLineError(await svc(['state', 'import', 'other.json']), 1, /is not a svc state file/);
    const doc = JSON.parse(await readFile(path.join(cwd, 'state.json'), 'utf8'));
    // A token's seal swapped for the reactor's: it opens as neither.
    doc.tokens[0].sealed = doc.reactors[0].sealed;
    await writeFile(path.join(cwd, 'tampered.json'), JSON.stringify(doc));
    expectOneLineError(await svc(['state', 'import', 'tampered.json']), 1, /has token \S+ whose seal does not open/);
    expectOneLineError(
      await svc(['state', 'import', 'missing.json']),
      1,
      /^Error: Cannot read missing\.json: no such file\.$/,
    );
    // A folder given for the file: said in words, not as an error code.
    expectOneLineError(await svc(['state', 'import', '.']), 1, /^Error: Cannot read \.: it is a folder\.$/);
    expectOneLineError(
      await svc(['state', 'export', '.', '--plaintext']),
      1,
      /^Error: Cannot write \S+: it is a folder; any previous file there is unchanged\.$/,
    );
    expect(await stateOf(emu)).toEqual(emptied);
    expect((await svc(['state', 'import', 'state.json'])).code).toBe(0);
    expect(await stateOf(emu)).toEqual(before);
  });

  test('the emulator refuses a document a tenant cannot keep: a key of another tenant, a dangling binding', async () => {
    const { emu, cwd, svc } = await setup();
    await populate(emu);
    expect((await svc(['state', 'export', 'state.json', '--plaintext'], {})).code).toBe(0);
    const tenant = await emu.call('POST', '/_emulator/tenants', { key: null, body: { name: 'b' } });
    const b = ['--base-url', emu.url, '--management-key', tenant.body.management_key];
    // The same file into another tenant of the same emulator: its Application keys are another's.
    const clash = await runSvc(['state', 'import', 'state.json', ...b], { cwd });
    expectOneLineError(clash, 1, /already belongs to an Application of another tenant/);
    const doc = JSON.parse(await readFile(path.join(cwd, 'state.json'), 'utf8'));
    doc.reactors[0].application_id = '99999999-9999-4999-8999-999999999999';
    const answer = await emu.call('POST', '/_emulator/state', { body: doc });
    expect(answer.status).toBe(422);
    expect(answer.body.detail).toMatch(/greet is bound to Application 9999.*Nothing changed\.$/);
    const privateKey = await emu.call('GET', '/_emulator/state', { key: emu.privateKey });
    expect(privateKey.status).toBe(403);
  });

  test('reset refuses without a terminal and without --yes', async () => {
    const { emu, svc } = await setup();
    await populate(emu);
    expectOneLineError(await svc(['state', 'reset']), 2, /Resetting the tenant's state needs --yes/);
    expect((await stateOf(emu)).reactors).toHaveLength(1);
  });

  test('a write that fails (killed half way) leaves the previous file whole and no temp file', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'state.json');
    await writeFile(file, '{"svc_state": 1, "previous": true}\n');
    const failing = {
      ...nodeFileSystem,
      async writeNew(temp: string, text: string) {
        await writeFile(temp, text.slice(0, text.length / 2));
        throw Object.assign(new Error('killed'), { code: 'EIO' });
      },
    };
    await expect(
      writeStateFile(file, { svc_state: 1, applications: [], reactors: [], proxies: [], tokens: [] }, failing),
    ).rejects.toThrow(`Cannot write ${file} (EIO); any previous file there is unchanged.`);
    expect(await readFile(file, 'utf8')).toBe('{"svc_state": 1, "previous": true}\n');
    expect(await readdir(dir)).toEqual(['state.json']);
  });

  test('an export that cannot reach the emulator leaves the previous file as it was', async () => {
    const { emu, cwd, svc } = await setup();
    await writeFile(path.join(cwd, 'state.json'), 'previous\n');
    await emu.dispose();
    const result = await svc(['state', 'export', 'state.json']);
    expect(result.code).not.toBe(0);
    expect(await readFile(path.join(cwd, 'state.json'), 'utf8')).toBe('previous\n');
  });

  test('a file of the previous version (the checked-in fixture) imports into this one', async () => {
    const { emu, cwd, svc } = await setup();
    const imported = await svc(['state', 'import', FIXTURE, '--json'], {});
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.json().changes).toHaveLength(4);
    const token = await emu.call('GET', '/tokens/44444444-4444-4444-8444-444444444444', { key: FIXTURE_KEY });
    expect(token.status, token.text).toBe(200);
    expect(token.body.data.number).toBe('4242424242424242');
    const run = await emu.call('POST', '/reactors/22222222-2222-4222-8222-222222222222/react', {
      key: emu.privateKey,
      body: { args: {} },
    });
    expect(run.body.raw).toEqual({ hello: 'fixture' });
    const proxy = await emu.call('GET', '/proxies/33333333-3333-4333-8333-333333333333');
    expect(proxy.body.key).toBe('proxy_local_FixtureFixtureFixtureFixtu');
    expect(cwd).toBeDefined();
  });
});
