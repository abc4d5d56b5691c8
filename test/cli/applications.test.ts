import { resolveTarget } from '../../src/cli/target/resolve.js';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { type CliResult, expectOneLineError, runSvc, splitArgs } from '../helpers/cli.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

const RULE = { priority: 1, container: '/pci/', transform: 'mask', permissions: ['token:read'] };

/** A real emulator, and a way to run the CLI against it with the global flags. */
async function setup() {
  const emu = await startEmulator();
  const cwd = await tempDir();
  const svc = (line: string | string[], extra: { env?: Record<string, string> } = {}): Promise<CliResult> => {
    const argv = typeof line === 'string' ? splitArgs(line) : line;
    return runSvc([...argv, '--base-url', emu.url, '--management-key', emu.managementKey], { cwd, ...extra });
  };
  return { emu, cwd, svc };
}

/** Creates an Application straight through the API. */
async function createApp(emu: TestEmulator, name: string, permissions = ['token:read']) {
  const result = await emu.call('POST', '/applications', { body: { name, type: 'private', permissions } });
  expect(result.status).toBe(201);
  return result.body as { id: string; name: string; key: string };
}

describe('applications list', () => {
  test('--json prints exactly the API page', async () => {
    const { emu, svc } = await setup();
    const result = await svc('applications list --json');
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const page = await emu.call('GET', '/applications');
    expect(result.stdout).toBe(`${JSON.stringify(page.body, null, 2)}\n`);
    expect(
      result
        .json()
        .data.map((app: { name: string }) => app.name)
        .sort(),
    ).toEqual(['svc management', 'svc private']);
  });

  test('human output is a plain table of the bootstrap apps without a TTY', async () => {
    const { emu, svc } = await setup();
    const result = await svc('applications list');
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^ID\s+NAME\s+TYPE\s+PERMISSIONS\s+RULES\s+EXPIRES$/);
    const { body } = await emu.call('GET', '/applications');
    for (const app of body.data as { id: string; name: string; type: string }[]) {
      const line = lines.find((l) => l.startsWith(app.id));
      expect(line).toBeDefined();
      expect(line).toContain(app.name);
      expect(line).toMatch(new RegExp(`\\s${app.type}\\s`));
    }
    // Plain lines: no escape codes, and the NAME column starts at the same offset on every line.
    expect(result.stdout).not.toMatch(/\u001b\[/);
    const nameAt = lines[0]!.indexOf('NAME');
    expect(lines[1]!.slice(nameAt)).toMatch(/^svc (management|private)/);
    expect(lines[2]!.slice(nameAt)).toMatch(/^svc (management|private)/);
  });

  test('the global options come from SVC_BASE_URL and SVC_MANAGEMENT_KEY too', async () => {
    const emu = await startEmulator();
    const cwd = await tempDir();
    const result = await runSvc('applications list --json', {
      cwd,
      env: { SVC_BASE_URL: emu.url, SVC_MANAGEMENT_KEY: emu.managementKey },
    });
    expect(result.code).toBe(0);
    expect(result.json().pagination.total_items).toBe(2);
  });

  test('--name filters by name, * a wildcard (issue 14.20)', async () => {
    const { emu, svc } = await setup();
    await createApp(emu, 'backend-eu');
    await createApp(emu, 'backend-us');
    await createApp(emu, 'reporting');
    const result = await svc('applications list --name backend-* --json');
    expect(result.code, result.stderr).toBe(0);
    expect(
      result
        .json()
        .data.map((app: { name: string }) => app.name)
        .sort(),
    ).toEqual(['backend-eu', 'backend-us']);
    const exact = await svc(['applications', 'list', '--name', 'svc management']);
    expect(exact.stdout.trimEnd().split('\n')).toHaveLength(2);
  });

  test('a bad --size is a usage error', async () => {
    const { svc } = await setup();
    expectOneLineError(
      await svc('applications list --size ten'),
      2,
      /^Error: --size must be a whole number, not "ten"\.$/m,
    );
  });
});

describe('applications create', () => {
  test('--json returns the API object with its key', async () => {
    const { emu, svc } = await setup();
    const result = await svc('applications create --name x --type private --permission token:read --json');
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const app = result.json();
    expect(app).toMatchObject({ name: 'x', type: 'private', permissions: ['token:read'], rules: [] });
    expect(app.key).toEqual(expect.any(String));
    const stored = await emu.call('GET', `/applications/${app.id}`);
    expect(stored.status).toBe(200);
    const { key: _key, ...rest } = app;
    expect(stored.body).toEqual(rest);
    // The key works.
    const self = await emu.call('GET', '/applications/key', { key: app.key });
    expect(self.status).toBe(403); // a private app lacks application:read, but the key authenticates (not 401)
  });

  test('the human form shows the key, with the "shown once" note on stderr', async () => {
    const { emu, svc } = await setup();
    const result = await svc(
      'applications create --name human --type private --permission token:read --permission token:create',
    );
    expect(result.code).toBe(0);
    const key = /^key\s+(\S+)$/m.exec(result.stdout)?.[1];
    expect(key).toBeDefined();
    expect(result.stdout).toMatch(/^name\s+human$/m);
    expect(result.stdout).toMatch(/^permissions\s+token:read, token:create$/m);
    expect(result.stderr).toMatch(/not shown again/);
    expect(result.stdout).not.toMatch(/not shown again/);
    const { body } = await emu.call('GET', '/applications');
    const created = (body.data as { name: string; id: string }[]).find((app) => app.name === 'human');
    expect(result.stdout).toContain(created!.id);
    expect((await emu.call('GET', '/applications/key', { key: key! })).status).toBe(403);
  });

  test('--rule is sent: repeatable, and an array form', async () => {
    const { emu, svc } = await setup();
    const second = { ...RULE, priority: 2, container: '/ssn/', transform: 'redact' };
    const third = { ...RULE, priority: 3, container: '/pii/', transform: 'reveal' };
    const result = await svc([
      'applications',
      'create',
      '--name',
      'ruled',
      '--type',
      'private',
      '--json',
      '--rule',
      JSON.stringify(RULE),
      '--rule',
      JSON.stringify([second, third]),
    ]);
    expect(result.code).toBe(0);
    const app = result.json();
    expect(app.permissions).toEqual([]);
    expect(app.rules).toEqual([RULE, second, third]);
    const stored = await emu.call('GET', `/applications/${app.id}`);
    expect(stored.body.rules).toEqual([RULE, second, third]);
  });

  test('--rule @file reads the rule (or an array of rules) from a file, relative to cwd (issue 14.20)', async () => {
    const { emu, cwd, svc } = await setup();
    const second = { ...RULE, priority: 2, container: '/ssn/', transform: 'redact' };
    await writeFile(path.join(cwd, 'rule.json'), JSON.stringify(RULE));
    await writeFile(path.join(cwd, 'rules.json'), JSON.stringify([second]));
    const result = await svc(
      'applications create --name filed --type private --rule @rule.json --rule @rules.json --json',
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.json().rules).toEqual([RULE, second]);
    const updated = await svc(`applications update ${result.json().id} --rule @rules.json --json`);
    expect(updated.code, updated.stderr).toBe(0);
    expect((await emu.call('GET', `/applications/${result.json().id}`)).body.rules).toEqual([second]);
    expectOneLineError(
      await svc('applications create --name x --type private --rule @missing.json'),
      1,
      /^Error: Cannot read --rule file .*missing\.json: no such file\.$/,
    );
  });

  test('the human form lists the rules', async () => {
    const { svc } = await setup();
    const result = await svc([
      'applications',
      'create',
      '--name',
      'r',
      '--type',
      'private',
      '--rule',
      JSON.stringify(RULE),
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^rules\s+1: \/pci\/ mask \[token:read\]$/m);
  });

  test('bad --rule JSON is a usage error in one line', async () => {
    const { emu, svc } = await setup();
    expectOneLineError(
      await svc(['applications', 'create', '--name', 'x', '--type', 'private', '--rule', '{bad']),
      2,
      /^Error: --rule must be JSON/,
    );
    expectOneLineError(
      await svc(['applications', 'create', '--name', 'x', '--type', 'private', '--rule', '42']),
      2,
      /^Error: --rule must be a JSON object/,
    );
    // Nothing was created.
    expect((await emu.call('GET', '/applications')).body.pagination.total_items).toBe(2);
  });

  test('an API validation error is one line on stderr and nothing on stdout', async () => {
    const { emu, svc } = await setup();
    const result = await svc('applications create --name x --type private --permission bogus');
    expectOneLineError(
      result,
      1,
      /^Error: Validation failed \(400\): --permission \(permissions\[0\]\): "bogus" is not a known permission/,
    );
    expect(result.stderr).not.toMatch(/bug in svc/);
    expect((await emu.call('GET', '/applications')).body.pagination.total_items).toBe(2);
  });

  test('with --json the error is a JSON document on stderr holding the problem', async () => {
    const { svc } = await setup();
    const result = await svc('applications create --name x --type private --permission bogus --json');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toContain('    at ');
    const document = JSON.parse(result.stderr) as {
      error: { status: number; title: string; errors: Record<string, string[]> };
    };
    expect(document.error.status).toBe(400);
    expect(document.error.title).toBe('Validation failed');
    expect(document.error.errors['permissions[0]']?.[0]).toMatch(/"bogus" is not a known permission/);
  });

  test('an unknown option, a missing --name and a bad --type choice are usage errors', async () => {
    const { emu, svc } = await setup();
    const unknown = await svc('applications create --name x --type private --frob');
    expectOneLineError(unknown, 2, /unknown option '--frob'/i);
    const missing = await svc('applications create --type private --permission token:read');
    expectOneLineError(missing, 2, /required option '--name <name>' not specified/i);
    const choice = await svc('applications create --name x --type nope');
    expectOneLineError(choice, 2, /'nope' is invalid.*private, public, management/);
    expect((await emu.call('GET', '/applications')).body.pagination.total_items).toBe(2);
  });
});

describe('applications get, update, regenerate, delete', () => {
  test('get by id and by exact name', async () => {
    const { svc, emu } = await setup();
    const app = await createApp(emu, 'reader');
    const byId = await svc(`applications get ${app.id} --json`);
    expect(byId.code).toBe(0);
    expect(byId.json()).toEqual((await emu.call('GET', `/applications/${app.id}`)).body);
    expect(byId.json().key).toBeUndefined();
    const byName = await svc('applications get reader');
    expect(byName.code).toBe(0);
    expect(byName.stdout).toMatch(new RegExp(`^id\\s+${app.id}$`, 'm'));
    expect(byName.stdout).not.toMatch(/^key/m);
    expect(byName.stderr).toBe('');
  });

  test('get of an unknown name says so', async () => {
    const { svc } = await setup();
    expectOneLineError(await svc('applications get nobody'), 1, /^Error: No Application named "nobody"/);
  });

  test('update by id replaces permissions and keeps the name when no --name is given', async () => {
    const { svc, emu } = await setup();
    const app = await createApp(emu, 'keepme');
    const result = await svc(
      `applications update ${app.id} --permission token:create --permission token:update --json`,
    );
    expect(result.code).toBe(0);
    expect(result.json()).toMatchObject({ id: app.id, name: 'keepme', permissions: ['token:create', 'token:update'] });
    const stored = await emu.call('GET', `/applications/${app.id}`);
    expect(stored.body.name).toBe('keepme');
    expect(stored.body.permissions).toEqual(['token:create', 'token:update']);
  });

  test('update by exact name renames, and sends --rule', async () => {
    const { svc, emu } = await setup();
    const app = await createApp(emu, 'old name');
    const result = await svc([
      'applications',
      'update',
      'old name',
      '--name',
      'new name',
      '--rule',
      JSON.stringify([RULE]),
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^name\s+new name$/m);
    const stored = await emu.call('GET', `/applications/${app.id}`);
    expect(stored.body.name).toBe('new name');
    expect(stored.body.rules).toEqual([RULE]);
    expect(stored.body.permissions).toEqual(['token:read']);
  });

  test('update with nothing to change is a usage error', async () => {
    const { svc, emu } = await setup();
    const app = await createApp(emu, 'same');
    expectOneLineError(
      await svc(`applications update ${app.id}`),
      2,
      /^Error: Nothing to update: pass --name, --permission or --rule\.$/m,
    );
  });

  test('regenerate issues a new key and the old one stops working', async () => {
    const { svc, emu } = await setup();
    const app = await createApp(emu, 'rotating');
    expect((await emu.call('GET', '/applications/key', { key: app.key })).status).toBe(403);
    const result = await svc(`applications regenerate rotating --yes --json`);
    expect(result.code).toBe(0);
    const fresh = result.json();
    expect(fresh.id).toBe(app.id);
    expect(fresh.key).toEqual(expect.any(String));
    expect(fresh.key).not.toBe(app.key);
    expect((await emu.call('GET', '/applications/key', { key: app.key })).status).toBe(401);
    expect((await emu.call('GET', '/applications/key', { key: fresh.key })).status).toBe(403);
  });

  test('regenerate in human form shows the new key and the note', async () => {
    const { svc, emu } = await setup();
    const app = await createApp(emu, 'rotating');
    const result = await svc(`applications regenerate ${app.id} --yes`);
    expect(result.code).toBe(0);
    const key = /^key\s+(\S+)$/m.exec(result.stdout)?.[1];
    expect(key).toBeDefined();
    expect(key).not.toBe(app.key);
    expect(result.stderr).toMatch(/not shown again/);
  });

  test('delete, then get is a 404', async () => {
    const { svc, emu } = await setup();
    const app = await createApp(emu, 'doomed');
    const deleted = await svc('applications delete doomed --yes');
    expect(deleted.code).toBe(0);
    expect(deleted.stdout).toBe(`Deleted Application ${app.id}.\n`);
    expect((await emu.call('GET', `/applications/${app.id}`)).status).toBe(404);
    expect((await emu.call('GET', '/applications/key', { key: app.key })).status).toBe(401);
    const get = await svc(`applications get ${app.id}`);
    expectOneLineError(get, 1, /^Error: Not found \(404\)/);
    expect(get.stderr).toContain(app.id);
  });

  test('delete --json prints the id', async () => {
    const { svc, emu } = await setup();
    const app = await createApp(emu, 'doomed');
    const deleted = await svc(`applications rm ${app.id} --json --yes`);
    expect(deleted.code).toBe(0);
    expect(deleted.json()).toEqual({ id: app.id, deleted: true });
  });

  test('an ambiguous name lists the ids and changes nothing', async () => {
    const { svc, emu } = await setup();
    const one = await createApp(emu, 'twin');
    const two = await createApp(emu, 'twin');
    for (const line of [
      'applications get twin',
      'applications delete twin --yes',
      'applications update twin --name solo',
    ]) {
      const result = await svc(line);
      expectOneLineError(result, 1, /^Error: 2 Applications are named "twin"; use an id/);
      expect(result.stderr).toContain(one.id);
      expect(result.stderr).toContain(two.id);
    }
    expect((await emu.call('GET', `/applications/${one.id}`)).body.name).toBe('twin');
    expect((await emu.call('GET', `/applications/${two.id}`)).body.name).toBe('twin');
  });
});

describe('applications whoami', () => {
  test('shows the management Application', async () => {
    const { svc, emu } = await setup();
    const result = await svc('applications whoami --json');
    expect(result.code).toBe(0);
    const keyUsed = {
      kind: 'management',
      key: `key_local_mgt_…${emu.managementKey.slice(-4)}`,
      source: 'flag',
      from: '--management-key',
    };
    expect(result.json()).toEqual({ ...(await emu.call('GET', '/applications/key')).body, key_used: keyUsed });
    expect(result.json()).toMatchObject({ name: 'svc management', type: 'management' });
    const human = await svc('applications whoami');
    expect(human.stdout).toMatch(/^name\s+svc management$/m);
    expect(human.stdout).toMatch(/^type\s+management$/m);
  });

  test('with only a private key, that key is used and lacks application:read', async () => {
    const { emu } = await setup();
    const cwd = await tempDir();
    const result = await runSvc(['applications', 'whoami', '--base-url', emu.url, '--api-key', emu.privateKey], {
      cwd,
    });
    expectOneLineError(
      result,
      1,
      /^Error: Forbidden \(403\): This private Application lacks the application:read permission\. The key sent, the API key from --api-key \(key_local_pvt_….{4}\), is valid/m,
    );
  });
});

describe('failures that are not the API', () => {
  test('connection refused says it cannot reach the URL', async () => {
    const dead = await startEmulator({ inMemory: true });
    const url = dead.url;
    await dead.dispose();
    const cwd = await tempDir();
    const result = await runSvc(['applications', 'list', '--base-url', url, '--management-key', 'key_whatever_1234'], {
      cwd,
    });
    expectOneLineError(
      result,
      1,
      new RegExp(`^Error: Cannot reach ${url.replace(/[.]/g, '\\.')}: connection refused\\.`),
    );
    const json = await runSvc(
      ['applications', 'list', '--json', '--base-url', url, '--management-key', 'key_whatever_1234'],
      { cwd },
    );
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr).error.detail).toContain(`Cannot reach ${url}`);
  });

  test('a base URL that is not a URL is a user error', async () => {
    const cwd = await tempDir();
    expectOneLineError(
      await runSvc('applications list --base-url nope --management-key k', { cwd }),
      1,
      /^Error: The base URL "nope" is not a valid URL/,
    );
    expectOneLineError(
      await runSvc('applications list --base-url ftp://x --management-key k', { cwd }),
      1,
      /must use http or https/,
    );
  });
});

describe('local target resolution', () => {
  test('with no base URL, the keys and URL come from .svc/credentials.json found from cwd upwards', async () => {
    const emu = await startEmulator();
    const expected = (await emu.call('GET', '/applications')).body;
    const here = await runSvc('applications list --json', { cwd: emu.dir });
    expect(here.code).toBe(0);
    expect(here.json()).toEqual(expected);
    const nested = path.join(emu.dir, 'a', 'b');
    await mkdir(nested, { recursive: true });
    const below = await runSvc('applications list --json', { cwd: nested });
    expect(below.code).toBe(0);
    expect(below.json()).toEqual(expected);
  });

  test('the local private key serves as the API key', async () => {
    const emu = await startEmulator();
    const target = await resolveTarget({}, {}, emu.dir);
    expect(target).toMatchObject({
      baseUrl: emu.url,
      managementKey: emu.managementKey,
      apiKey: emu.privateKey,
      source: 'local',
    });
  });

  test('with no credentials and no keys: a clear "No management key" message', async () => {
    const cwd = await tempDir();
    const result = await runSvc('applications list', { cwd });
    expectOneLineError(
      result,
      1,
      /^Error: No management key for http:\/\/127\.0\.0\.1:8790: pass --management-key, set SVC_MANAGEMENT_KEY/,
    );
    expect(result.stderr).toContain('.svc/credentials.json');
  });

  test('the local credentials go only to the local emulator', async () => {
    const emu = await startEmulator();
    // --base-url naming the local emulator itself still uses its keys
    const same = await runSvc(['applications', 'list', '--json', '--base-url', emu.url], { cwd: emu.dir });
    expect(same.code).toBe(0);
    // any other URL never receives them
    const elsewhere = await runSvc(['applications', 'list', '--base-url', 'http://127.0.0.1:9'], { cwd: emu.dir });
    expectOneLineError(elsewhere, 1, /^Error: No management key for http:\/\/127\.0\.0\.1:9: pass --management-key/);
  });
});
