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
