import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { PERMISSIONS_BY_TYPE } from '../../src/api/permissions.js';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

const WRONG = 'key_local_mgt_WrongWrongWrongWrong1234';
const MASKED_WRONG = 'key_local_mgt_…1234';

async function createManagementApp(emu: TestEmulator, name: string) {
  const created = await emu.call('POST', '/applications', {
    body: { name, type: 'management', permissions: PERMISSIONS_BY_TYPE.management },
  });
  expect(created.status, created.text).toBe(201);
  return created.body as { id: string; name: string; key: string };
}

describe('an auth error names where the refused key came from (issue 14.13)', () => {
  test('--management-key', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    const result = await runSvc(['applications', 'list', '--base-url', emu.url, '--management-key', WRONG], { cwd });
    expectOneLineError(result, 1, /^Error: Unauthenticated \(401\): .*the management key from --management-key/);
    expect(result.stderr).toContain(MASKED_WRONG);
    expect(result.stderr).not.toContain(WRONG);
  });

  test('SVC_MANAGEMENT_KEY, and SVC_API_KEY for a token command', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    const env = {
      SVC_BASE_URL: emu.url,
      SVC_MANAGEMENT_KEY: WRONG,
      SVC_API_KEY: 'key_local_pvt_WrongWrongWrongWrong5678',
    };
    expectOneLineError(
      await runSvc('applications list', { cwd, env }),
      1,
      /\(401\): .*the management key from SVC_MANAGEMENT_KEY \(key_local_mgt_…1234\)/,
    );
    expectOneLineError(
      await runSvc('tokens list', { cwd, env }),
      1,
      /\(401\): .*the API key from SVC_API_KEY \(key_local_pvt_…5678\)/,
    );
  });

  test('a profile, by name', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    await runSvc(['profiles', 'add', 'staging', '--base-url', emu.url, '--management-key', WRONG], { cwd });
    const result = await runSvc('applications list --profile staging', { cwd });
    expectOneLineError(result, 1, /\(401\): .*the management key from profile "staging"/);
  });

  test('the emulator credentials file, by path', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    const file = path.join(cwd, '.svc', 'credentials.json');
    await mkdir(path.dirname(file));
    await writeFile(file, JSON.stringify({ url: emu.url, management_key: WRONG, private_key: emu.privateKey }));
    const result = await runSvc('applications list', { cwd });
    expectOneLineError(result, 1, /\(401\): .*the management key from /);
    expect(result.stderr).toContain(file);
  });

  test('a 403: the API key standing in for the management key says so', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    const result = await runSvc(['reactors', 'list', '--base-url', emu.url, '--api-key', emu.privateKey], { cwd });
    expectOneLineError(
      result,
      1,
      /^Error: Forbidden \(403\): .*lacks the reactor:read permission\..*the API key from --api-key/,
    );
  });

  test('--json: the problem as the server sent it, with a note naming the source', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    const result = await runSvc(['applications', 'list', '--json', '--base-url', emu.url, '--management-key', WRONG], {
      cwd,
    });
    expect(result.code).toBe(1);
    const { error } = JSON.parse(result.stderr);
    expect(error).toMatchObject({ status: 401, title: 'Unauthenticated' });
    expect(error.note).toMatch(/--management-key/);
    expect(result.stderr).not.toContain(WRONG);
  });
});

describe('invoke by name with only an API key (issue 14.4)', () => {
  test('reactor: says that resolving a name needs the management key, or the id', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    const created = await emu.call('POST', '/reactors', {
      body: { name: 'echo', code: 'module.exports = async (req) => ({ raw: req.args });', configuration: {} },
    });
    expect(created.status, created.text).toBe(201);
    const keys = ['--base-url', emu.url, '--api-key', emu.privateKey];
    const byName = await runSvc(['invoke', 'reactor', 'echo', ...keys], { cwd });
    expectOneLineError(byName, 1, /reactor named "echo"/);
    expect(byName.stderr).toMatch(/management key \(--management-key or SVC_MANAGEMENT_KEY\)/);
    expect(byName.stderr).toMatch(/reactor's id/);
    // With the id, the API key alone is enough.
    const byId = await runSvc(['invoke', 'reactor', created.body.id, '--args', '{"a":1}', '--json', ...keys], { cwd });
    expect(byId.code, byId.stderr).toBe(0);
    expect(byId.json().raw).toEqual({ a: 1 });
  });

  test('proxy: says to pass the management key, or the proxy key', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    const created = await emu.call('POST', '/proxies', {
      body: { name: 'stripe', destination_url: 'http://127.0.0.1:9' },
    });
    expect(created.status, created.text).toBe(201);
    const result = await runSvc(['invoke', 'proxy', 'stripe', '--base-url', emu.url, '--api-key', emu.privateKey], {
      cwd,
    });
    expectOneLineError(result, 1, /proxy named "stripe"/);
    expect(result.stderr).toMatch(/--management-key or SVC_MANAGEMENT_KEY/);
    expect(result.stderr).toMatch(/proxy key/);
  });
});

describe('applications whoami describes the key given (issue 14.6)', () => {
  test('--api-key beats the management key; the key (masked) and its source are shown', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    const ops = await createManagementApp(emu, 'ops');
    const args = ['--base-url', emu.url, '--management-key', emu.managementKey, '--api-key', ops.key];
    const json = await runSvc(['applications', 'whoami', '--json', ...args], { cwd });
    expect(json.code, json.stderr).toBe(0);
    expect(json.json()).toMatchObject({
      id: ops.id,
      name: 'ops',
      key_used: { kind: 'api', source: 'flag', from: '--api-key', key: `key_local_mgt_…${ops.key.slice(-4)}` },
    });
    expect(json.stdout).not.toContain(ops.key);
    const human = await runSvc(['applications', 'whoami', ...args], { cwd });
    expect(human.stdout).toMatch(/^name\s+ops$/m);
    expect(human.stdout).toMatch(/^key used\s+key_local_mgt_….{4}, the API key from --api-key$/m);
  });

  test('without --api-key: the management key, from the credentials file', async () => {
    const emu = await startEmulator();
    const result = await runSvc('applications whoami --json', { cwd: emu.dir });
    expect(result.code, result.stderr).toBe(0);
    const file = path.join(emu.dir, '.svc', 'credentials.json');
    expect(result.json()).toMatchObject({
      name: 'svc management',
      key_used: { kind: 'management', source: 'credentials', from: file },
    });
  });

  test('a private key cannot read its Application: the error says the key is valid, which it is and where from', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    const result = await runSvc(['applications', 'whoami', '--base-url', emu.url, '--api-key', emu.privateKey], {
      cwd,
    });
    expectOneLineError(
      result,
      1,
      /^Error: Forbidden \(403\): This private Application lacks the application:read permission\./,
    );
    expect(result.stderr).toMatch(/the API key from --api-key \(key_local_pvt_…/);
    expect(result.stderr).toMatch(/is valid/);
  });
});

describe('--management-key - and --api-key - read the key from stdin (issue 14.17)', () => {
  test('one line, trimmed; the key is used', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    const mgmt = await runSvc(['applications', 'list', '--json', '--base-url', emu.url, '--management-key', '-'], {
      cwd,
      stdin: `  ${emu.managementKey}  \n`,
    });
    expect(mgmt.code, mgmt.stderr).toBe(0);
    expect(mgmt.json().pagination.total_items).toBe(2);
    const api = await runSvc(['tokens', 'list', '--json', '--base-url', emu.url, '--api-key', '-'], {
      cwd,
      stdin: `${emu.privateKey}\n`,
    });
    expect(api.code, api.stderr).toBe(0);
  });

  test('a refused key read from stdin is named as such', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    const result = await runSvc(['applications', 'list', '--base-url', emu.url, '--management-key', '-'], {
      cwd,
      stdin: `${WRONG}\n`,
    });
    expectOneLineError(result, 1, /the management key from --management-key - \(stdin\)/);
  });

  test('nothing on stdin, or both keys from stdin, is a usage error', async () => {
    const cwd = await tempDir();
    const url = 'http://127.0.0.1:9';
    expectOneLineError(
      await runSvc(['applications', 'list', '--base-url', url, '--management-key', '-'], { cwd, stdin: '\n' }),
      2,
      /^Error: --management-key - read no key from stdin/,
    );
    expectOneLineError(
      await runSvc(['applications', 'list', '--base-url', url, '--management-key', '-', '--api-key', '-'], {
        cwd,
        stdin: 'a\nb\n',
      }),
      2,
      /only one of them can read stdin/,
    );
  });

  test('profiles add saves a key read from stdin', async () => {
    const cwd = await tempDir();
    const result = await runSvc(['profiles', 'add', 'ci', '--base-url', 'https://api.example.com', '--api-key', '-'], {
      cwd,
      stdin: 'key_live_pvt_0123456789abcdef\n',
    });
    expect(result.code, result.stderr).toBe(0);
    const saved = JSON.parse(await readFile(path.join(cwd, '.config', 'svc', 'config.json'), 'utf8'));
    expect(saved.profiles.ci).toEqual({
      base_url: 'https://api.example.com',
      api_key: 'key_live_pvt_0123456789abcdef',
    });
  });
});
