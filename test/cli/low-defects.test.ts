import { describe, expect, test } from 'vitest';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { startEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

describe('issue 31, low', () => {
  test('invoke proxy --path is sent as typed: the server refuses `..` in one line, not raw JSON', async () => {
    const emu = await startEmulator({ inMemory: true });
    const created = await emu.call('POST', '/proxies', {
      body: { name: 'echo', destination_url: 'http://127.0.0.1:9/', configuration: {} },
    });
    expect(created.status, created.text).toBe(201);
    const target = ['--base-url', emu.url, '--management-key', emu.managementKey, '--api-key', emu.privateKey];
    const result = await runSvc(['invoke', 'proxy', 'echo', '--path', '/../etc', ...target], { cwd: await tempDir() });
    expectOneLineError(result, 1, /^Error: Unsafe proxy path \(400\): The proxy path "\/\.\.\/etc" is refused/);
    expect(result.stderr).not.toContain('{');
  });

  test('an https base URL against a plain-HTTP server is one line saying to use http://', async () => {
    const emu = await startEmulator({ inMemory: true });
    const https = emu.url.replace('http:', 'https:');
    const cwd = await tempDir();
    const expected = `Error: ${https} answered in plain HTTP: use ${emu.url}.`;
    expectOneLineError(
      await runSvc(['reactors', 'list', '--base-url', https, '--management-key', emu.managementKey], { cwd }),
      1,
      expected,
    );
    expectOneLineError(
      await runSvc(['logs', '--base-url', https, '--management-key', emu.managementKey], { cwd }),
      1,
      expected,
    );
  });
});

describe('--json errors of the CLI itself', () => {
  test('carry type, title, detail and exit_code as problems do, and no commander prose', async () => {
    const cwd = await tempDir();
    const unknown = await runSvc(['reactors', 'list', '--bogus', '--json'], { cwd });
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.stderr)).toEqual({
      error: {
        type: 'urn:svc:cli:usage-error',
        title: 'Usage error',
        detail: "unknown option '--bogus'",
        exit_code: 2,
      },
    });
    const typo = await runSvc(['reactors', 'lst', '--json'], { cwd });
    expect(typo.code).toBe(2);
    expect(typo.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(typo.stderr).error).toMatchObject({ type: 'urn:svc:cli:usage-error', exit_code: 2 });
    const bare = await runSvc(['reactors', '--json'], { cwd });
    expect(bare.code).toBe(2);
    expect(bare.stderr).not.toContain('Usage:');
    expect(JSON.parse(bare.stderr).error).toMatchObject({
      type: 'urn:svc:cli:usage-error',
      detail: 'a command is missing: svc reactors --help lists them',
    });
    const user = await runSvc(['invoke', 'reactor', 'x', '--wait', '--json', '--base-url', 'http://127.0.0.1:9'], {
      cwd,
    });
    expect(JSON.parse(user.stderr).error).toMatchObject({ type: 'urn:svc:cli:usage-error', exit_code: 2 });
    const missing = await runSvc(['tenants', 'list', '--json', '--base-url', 'https://api.example.com'], { cwd });
    expect(JSON.parse(missing.stderr).error).toMatchObject({ type: 'urn:svc:cli:error', title: 'Error', exit_code: 1 });
  });
});
