import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { http, startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { spawnSvc } from '../helpers/process.js';
import { plain, svcInPty } from '../helpers/pty.js';
import { tempDir } from '../helpers/temp.js';

async function createApp(emu: TestEmulator, name: string) {
  const created = await emu.call('POST', '/applications', {
    body: { name, type: 'private', permissions: ['token:read'] },
  });
  expect(created.status, created.text).toBe(201);
  return created.body as { id: string; name: string; key: string };
}

describe('destructive commands ask first in a terminal (issue 14.3, a real pseudo-terminal)', () => {
  test('delete asks "[y/N]"; no keeps the Application, yes deletes it', async () => {
    const emu = await startEmulator();
    const app = await createApp(emu, 'reporting');

    const declined = svcInPty(['applications', 'delete', 'reporting'], { cwd: emu.dir });
    await declined.waitFor(`Delete Application "reporting" (${app.id})? [y/N]`);
    declined.type('n\r');
    expect(await declined.exited).toBe(1);
    expect(plain(declined.output())).toMatch(/Cancelled/);
    expect((await emu.call('GET', `/applications/${app.id}`)).status).toBe(200);

    const accepted = svcInPty(['applications', 'delete', 'reporting'], { cwd: emu.dir });
    await accepted.waitFor('[y/N]');
    accepted.type('y\r');
    expect(await accepted.exited).toBe(0);
    expect(plain(accepted.output())).toContain(`Deleted Application ${app.id}.`);
    expect((await emu.call('GET', `/applications/${app.id}`)).status).toBe(404);
  });

  test('the Application whose key the CLI uses gets a stronger warning; Enter alone is no', async () => {
    const emu = await startEmulator();
    const run = svcInPty(['applications', 'delete', 'svc management'], { cwd: emu.dir });
    await run.waitFor('[y/N]');
    const screen = plain(run.output());
    expect(screen).toMatch(/Warning: .*the management key svc is using/);
    expect(screen).toContain(path.join(emu.dir, '.svc', 'credentials.json'));
    run.type('\r');
    expect(await run.exited).toBe(1);
    expect((await emu.call('GET', '/applications/key')).status).toBe(200);
  });

  test('regenerate asks, then updates .svc/credentials.json and says so', async () => {
    const emu = await startEmulator();
    const run = svcInPty(['applications', 'regenerate', 'svc management'], { cwd: emu.dir });
    await run.waitFor('[y/N]');
    expect(plain(run.output())).toMatch(/Regenerate the key of Application "svc management" \(.*\)\?/);
    expect(plain(run.output())).toMatch(/Warning: .*the management key svc is using/);
    run.type('y\r');
    expect(await run.exited).toBe(0);
    const file = path.join(emu.dir, '.svc', 'credentials.json');
    expect(plain(run.output())).toContain(`Updated ${file}`);
    expect(JSON.parse(await readFile(file, 'utf8')).management_key).not.toBe(emu.managementKey);
  });
});

describe('profiles add prompts for keys with hidden input (issue 14.17, a real pseudo-terminal)', () => {
  test('the keys typed are saved and never shown', async () => {
    const cwd = await tempDir();
    const secret = 'key_live_mgt_TypedNotShown0123456789';
    const run = svcInPty(['profiles', 'add', 'staging', '--base-url', 'https://api.example.com'], { cwd });
    await run.waitFor(/Management key.*: $/m);
    run.type(`${secret}\r`);
    await run.waitFor(/API key.*: $/m);
    run.type('\r');
    expect(await run.exited).toBe(0);
    expect(plain(run.output())).not.toContain(secret);
    expect(plain(run.output())).not.toContain('TypedNot');
    const saved = JSON.parse(await readFile(path.join(cwd, '.config', 'svc', 'config.json'), 'utf8'));
    expect(saved.profiles.staging).toEqual({ base_url: 'https://api.example.com', management_key: secret });
  });
});

describe('svc serve --management-key - (issue 14.17, a real process)', () => {
  test('reads the bootstrap management key from stdin', async () => {
    const cwd = await tempDir();
    const key = 'key_local_mgt_FromStdin0123456789abcd';
    const serve = spawnSvc(['serve', '--port', '0', '--in-memory', '--management-key', '-'], { cwd });
    serve.child.stdin.end(`${key}\n`);
    const { url } = JSON.parse(await serve.waitForLine((line) => line.includes('"event":"listening"')));
    await serve.waitForLine((line) => line.includes('"event":"ready"'));
    expect((await http(`${url}/applications/key`, 'GET', { key })).status).toBe(200);
    expect(serve.lines.join('\n')).not.toContain(key);
    serve.child.kill('SIGTERM');
    expect((await serve.exited).code).toBe(0);
  });
});
