import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { PERMISSIONS_BY_TYPE } from '../../src/api/permissions.js';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

/** A URL where nothing listens: a command that sent a request there would fail with "Cannot reach". */
async function deadUrl(): Promise<string> {
  const dead = await startEmulator({ inMemory: true });
  const url = dead.url;
  await dead.dispose();
  return url;
}

async function createManagementApp(emu: TestEmulator, name: string) {
  const created = await emu.call('POST', '/applications', {
    body: { name, type: 'management', permissions: PERMISSIONS_BY_TYPE.management },
  });
  expect(created.status, created.text).toBe(201);
  return created.body as { id: string; name: string; key: string };
}

describe('destructive commands without a terminal need --yes (issue 14.3)', () => {
  test.each([
    ['applications delete backend', /deleting Application "backend"/i],
    ['applications regenerate backend', /regenerating the key of Application "backend"/i],
    ['reactors delete charge', /deleting reactor "charge"/i],
    ['proxies delete stripe', /deleting proxy "stripe"/i],
    ['tokens delete card-1', /deleting token "card-1"/i],
    ['transactions rollback 0b1c2d3e-0000-4000-8000-000000000000', /rolling back transaction/i],
    ['profiles remove staging', /removing profile "staging"/i],
  ])('%s: exit 2 naming --yes, before any request', async (line, what) => {
    const cwd = await tempDir();
    const url = await deadUrl();
    await runSvc(['profiles', 'add', 'staging', '--base-url', 'https://api.example.com'], { cwd });
    const result = await runSvc(`${line} --base-url ${url} --management-key key_x_1234 --api-key key_y_1234`, { cwd });
    expectOneLineError(result, 2, /^Error: .*--yes/);
    expect(result.stderr).toMatch(what);
    expect(result.stderr).not.toContain('Cannot reach');
    // The profile is still there.
    expect((await runSvc('profiles list --json', { cwd })).json()).toEqual([
      expect.objectContaining({ name: 'staging' }),
    ]);
  });

  test('--yes (and -y) go ahead; the help of each shows the flag', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    const keys = ['--base-url', emu.url, '--management-key', emu.managementKey];
    const one = await createManagementApp(emu, 'one');
    const two = await createManagementApp(emu, 'two');
    expect((await runSvc(['applications', 'delete', 'one', '--yes', ...keys], { cwd })).code).toBe(0);
    expect((await runSvc(['applications', 'rm', two.id, '-y', ...keys], { cwd })).code).toBe(0);
    expect((await emu.call('GET', `/applications/${one.id}`)).status).toBe(404);
    expect((await emu.call('GET', `/applications/${two.id}`)).status).toBe(404);
    for (const help of [
      'applications delete',
      'applications regenerate',
      'reactors delete',
      'proxies delete',
      'tokens delete',
      'transactions rollback',
      'profiles remove',
    ]) {
      expect((await runSvc(`${help} --help`, { cwd })).stdout).toMatch(/-y, --yes\s+\S/);
    }
  });
});

describe('regenerating a key the CLI holds (issue 14.3)', () => {
  test('the management key in .svc/credentials.json: the file is updated (0600) and the output says so', async () => {
    const emu = await startEmulator();
    const file = path.join(emu.dir, '.svc', 'credentials.json');
    const result = await runSvc(['applications', 'regenerate', 'svc management', '--yes', '--json'], { cwd: emu.dir });
    expect(result.code, result.stderr).toBe(0);
    const fresh: string = result.json().key;
    expect(fresh).not.toBe(emu.managementKey);
    const saved = JSON.parse(await readFile(file, 'utf8'));
    expect(saved).toMatchObject({ management_key: fresh, private_key: emu.privateKey, url: emu.url });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(result.stderr).toContain(`Updated ${file}`);
    expect(result.stderr).not.toContain(fresh);
    // The next command uses the new key from the file.
    const next = await runSvc('applications list --json', { cwd: emu.dir });
    expect(next.code, next.stderr).toBe(0);
  });

  test('the private key in .svc/credentials.json (its Application cannot read itself) is updated too', async () => {
    const emu = await startEmulator();
    const file = path.join(emu.dir, '.svc', 'credentials.json');
    const result = await runSvc(['applications', 'regenerate', 'svc private', '--yes'], { cwd: emu.dir });
    expect(result.code, result.stderr).toBe(0);
    const fresh = /^key\s+(\S+)$/m.exec(result.stdout)?.[1];
    expect(fresh).toMatch(/^key_local_pvt_/);
    const saved = JSON.parse(await readFile(file, 'utf8'));
    expect(saved).toMatchObject({ management_key: emu.managementKey, private_key: fresh });
    expect(result.stderr).toContain(`Updated ${file}`);
    const tokens = await runSvc('tokens list --json', { cwd: emu.dir });
    expect(tokens.code, tokens.stderr).toBe(0);
  });

  test('the key of a profile: says how to update the profile', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    const ops = await createManagementApp(emu, 'ops');
    expect(
      (await runSvc(['profiles', 'add', 'ops', '--base-url', emu.url, '--management-key', ops.key], { cwd })).code,
    ).toBe(0);
    const result = await runSvc(['applications', 'regenerate', 'ops', '--yes', '--profile', 'ops'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/Profile "ops" holds the old key/);
    expect(result.stderr).toContain('svc profiles add ops --management-key -');
  });

  test('a key from SVC_MANAGEMENT_KEY: says the variable holds the old key', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    const ops = await createManagementApp(emu, 'ops');
    const result = await runSvc(['applications', 'regenerate', ops.id, '--yes'], {
      cwd,
      env: { SVC_BASE_URL: emu.url, SVC_MANAGEMENT_KEY: ops.key },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/SVC_MANAGEMENT_KEY .*old key/);
  });

  test('deleting the Application of the key in use says that key no longer works', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    const ops = await createManagementApp(emu, 'ops');
    const result = await runSvc(['applications', 'delete', 'ops', '--yes'], {
      cwd,
      env: { SVC_BASE_URL: emu.url, SVC_MANAGEMENT_KEY: ops.key },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/SVC_MANAGEMENT_KEY/);
    expect(result.stderr).toMatch(/no longer works/);
  });

  test('an Application whose key the CLI does not hold: no note', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    const other = await createManagementApp(emu, 'other');
    const result = await runSvc(
      ['applications', 'regenerate', other.id, '--yes', '--base-url', emu.url, '--management-key', emu.managementKey],
      { cwd },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe(
      'Store this key now: it is not shown again (`svc applications regenerate` issues a new one).\n',
    );
  });
});
