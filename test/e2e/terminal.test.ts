import { describe, expect, test } from 'vitest';
import { startEmulator } from '../helpers/emulator.js';
import { runSvc } from '../helpers/cli.js';
import { plain, svcInPty } from '../helpers/pty.js';
import { tempDir } from '../helpers/temp.js';

describe('svc in a terminal (a real pseudo-terminal)', () => {
  test('a list keeps every id whole and keeps a gap between columns', async () => {
    const emu = await startEmulator({ inMemory: true });
    for (const name of ['payments-backend-with-a-long-name', 'reporting']) {
      const created = await emu.call('POST', '/applications', {
        body: {
          name,
          type: 'private',
          permissions: ['token:create', 'token:read', 'token:update', 'token:delete', 'token:use'],
        },
      });
      expect(created.status).toBe(201);
    }
    const listed = await emu.call('GET', '/applications?size=100');
    const ids: string[] = listed.body.data.map((app: { id: string }) => app.id);

    const run = svcInPty(['applications', 'list'], {
      cwd: emu.dir,
      columns: 80,
      env: { SVC_BASE_URL: emu.url, SVC_MANAGEMENT_KEY: emu.managementKey },
    });
    expect(await run.exited).toBe(0);
    const screen = plain(run.output());
    for (const line of screen.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    for (const id of ids) expect(screen).toContain(id);
    expect(screen).toContain('payments-backend-with-a-long-name');
    expect(screen).not.toContain('…');
  });

  test('a call that takes a while shows a spinner on stderr, erased before the result; never with --json', async () => {
    const emu = await startEmulator({ inMemory: true });
    const code =
      'module.exports = async () => { await new Promise((resolve) => setTimeout(resolve, 1500)); return { raw: { done: true } }; };';
    const created = await emu.call('POST', '/reactors', { body: { name: 'slow', code, configuration: {} } });
    expect(created.status, created.text).toBe(201);
    const env = { SVC_BASE_URL: emu.url, SVC_MANAGEMENT_KEY: emu.managementKey, SVC_API_KEY: emu.privateKey };

    const run = svcInPty(['invoke', 'reactor', 'slow'], { cwd: emu.dir, env });
    expect(await run.exited).toBe(0);
    const screen = run.output();
    // What it waits for (the reactor, and the request) and for how long.
    const spinner = screen.indexOf(`⠋ Waiting for reactor slow (POST ${new URL(emu.url).host})… 0s`);
    expect(spinner, screen).toBeGreaterThanOrEqual(0);
    // The spinner's line is erased, then the result is written from the start of a clean line.
    const result = screen.indexOf('{');
    expect(screen.lastIndexOf('\r\u001b[2K', result)).toBeGreaterThan(spinner);
    expect(JSON.parse(plain(screen.slice(result)))).toEqual({ raw: { done: true } });

    const json = svcInPty(['invoke', 'reactor', 'slow', '--json'], { cwd: emu.dir, env });
    expect(await json.exited).toBe(0);
    expect(json.output()).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
    expect(JSON.parse(json.output())).toEqual({ raw: { done: true } });
  });

  test('Ctrl-C while the spinner shows erases its line (issue 31: it stayed on the terminal)', async () => {
    const emu = await startEmulator({ inMemory: true });
    const code =
      'module.exports = async () => { await new Promise((resolve) => setTimeout(resolve, 20000)); return {}; };';
    const created = await emu.call('POST', '/reactors', { body: { name: 'slower', code, configuration: {} } });
    expect(created.status, created.text).toBe(201);
    const env = { SVC_BASE_URL: emu.url, SVC_MANAGEMENT_KEY: emu.managementKey, SVC_API_KEY: emu.privateKey };
    const run = svcInPty(['invoke', 'reactor', 'slower'], { cwd: emu.dir, env });
    await run.waitFor('Waiting for reactor slower');
    run.type('\u0003');
    expect(await run.exited).toBe(130);
    const screen = run.output();
    expect(screen.lastIndexOf('\r\u001b[2K')).toBeGreaterThan(screen.lastIndexOf('Waiting for reactor slower'));
    expect(plain(screen.slice(screen.lastIndexOf('\r\u001b[2K'))).trim()).toBe('');
  });

  test('svc serve --in-memory offers only what works there: env exports that the CLI then uses', async () => {
    const cwd = await tempDir();
    const serve = svcInPty(['serve', '--port', '0', '--in-memory', '--log-format', 'pretty'], { cwd, columns: 200 });
    await serve.waitFor('Stop: Ctrl-C');
    const screen = plain(serve.output());
    expect(screen).not.toContain('Try: svc applications list');
    const exports = /^ {4}export (.*)$/m.exec(screen)?.[1];
    expect(exports, screen).toMatch(
      /^SVC_BASE_URL=http:\/\/127\.0\.0\.1:\d+ SVC_MANAGEMENT_KEY=key_local_mgt_\w+ SVC_API_KEY=key_local_pvt_\w+$/,
    );
    // What the banner offers works, from a folder with no credentials file.
    const env = Object.fromEntries(exports!.split(' ').map((pair) => pair.split('=') as [string, string]));
    const listed = await runSvc('applications list --json', { cwd: await tempDir(), env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.json().pagination.total_items).toBe(2);
    serve.type('\u0003');
    expect(await serve.exited).toBe(0);
  });
});
