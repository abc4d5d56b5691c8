import { readdir } from 'node:fs/promises';
import { describe, expect, test } from 'vitest';
import { expectOneLineError, runSvc, splitArgs } from '../helpers/cli.js';
import { startEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

/** A URL where nothing listens: a command that sent a request there would fail with "Cannot reach". */
async function deadUrl(): Promise<string> {
  const dead = await startEmulator({ inMemory: true });
  const url = dead.url;
  await dead.dispose();
  return url;
}

const ID = '0b1c2d3e-0000-4000-8000-000000000000';

describe('usage errors the CLI checks itself exit 2 before any request, naming flags (issue 14.15)', () => {
  test.each([
    ['applications list --size 0', /^Error: --size must be from 1 to 100, not "0"\.$/],
    ['reactors list --size 101', /^Error: --size must be from 1 to 100, not "101"\.$/],
    ['proxies list --page 0', /^Error: --page must be from 1 to 1000000, not "0"\.$/],
    ['tokens list --page -1', /^Error: --page must be a whole number, not "-1"\.$/],
    [
      `invoke reactor ${ID} --callback-url http://127.0.0.1:9/hook --timeout-ms 5`,
      /^Error: --timeout-ms must be from 10000 to 210000, not "5"\.$/,
    ],
    [
      `invoke reactor ${ID} --timeout-ms 20000`,
      /^Error: --timeout-ms applies to asynchronous invocations only: add --callback-url\.$/,
    ],
    [
      `invoke reactor ${ID} --callback-url not-a-url`,
      /^Error: --callback-url must be an absolute http or https URL, not "not-a-url"\.$/,
    ],
    [
      'tokens create --data x --expires-at tomorrow',
      /^Error: --expires-at must be an ISO 8601 date-time with a time zone \(e\.g\. 2030-01-01T00:00:00Z\), not "tomorrow"\.$/,
    ],
    [
      'applications create --name a --type private --permission token:read --expires-at 2030-13-01T00:00:00Z',
      /^Error: --expires-at must be an ISO 8601 date-time/,
    ],
    [
      'applications create --name a --type private --permission token:read --expires-at 2030-01-01',
      /^Error: --expires-at must be an ISO 8601 date-time/,
    ],
    ['applications list --id abc', /^Error: --id must be an Application id \(a UUID\), not "abc"\.$/],
    [
      'proxies create --name p --destination-url nope',
      /^Error: --destination-url must be an absolute http or https URL, not "nope"\.$/,
    ],
    [
      `proxies update ${ID} --destination-url ftp://example.com`,
      /^Error: --destination-url must be an absolute http or https URL/,
    ],
    [
      `proxies patch ${ID} --destination-url /relative`,
      /^Error: --destination-url must be an absolute http or https URL/,
    ],
  ])('%s', async (line, message) => {
    const cwd = await tempDir();
    const url = await deadUrl();
    const result = await runSvc([...splitArgs(line), '--base-url', url, '--management-key', 'key_x_1234'], { cwd });
    expectOneLineError(result, 2, message);
    expect(result.stderr).not.toMatch(/timeout_ms|expires_at|destination_url|callback_url/);
  });

  test.each(['99999', '65536', '-1', 'http'])('serve --port %s: exit 2, nothing started', async (port) => {
    const cwd = await tempDir();
    const signal = AbortSignal.timeout(5000);
    const result = await runSvc(['serve', '--port', port], { cwd, signal });
    expect(signal.aborted).toBe(false);
    expectOneLineError(result, 2, `Error: --port must be a whole number from 0 to 65535, not "${port}".`);
    expect(await readdir(cwd)).toEqual([]);
  });

  test('a value in range still goes to the server', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    const result = await runSvc(
      [
        'applications',
        'list',
        '--size',
        '100',
        '--page',
        '1',
        '--json',
        '--base-url',
        emu.url,
        '--management-key',
        emu.managementKey,
      ],
      { cwd },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.json().pagination.page_size).toBe(100);
  });

  test('a field error of the server names the flag the user typed', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    const name = 'n'.repeat(201);
    const result = await runSvc(
      [
        'applications',
        'create',
        '--name',
        name,
        '--type',
        'private',
        '--permission',
        'token:read',
        '--base-url',
        emu.url,
        '--management-key',
        emu.managementKey,
      ],
      { cwd },
    );
    expectOneLineError(result, 1, /^Error: Validation failed \(400\): --name: /);
    const rule = await runSvc(
      [
        'applications',
        'create',
        '--name',
        'r',
        '--type',
        'private',
        '--rule',
        '{"priority":"a"}',
        '--base-url',
        emu.url,
        '--management-key',
        emu.managementKey,
      ],
      { cwd },
    );
    expectOneLineError(
      rule,
      1,
      /^Error: Validation failed \(400\): --rule \(rules\[0\]\.\w+\): .*--rule \(rules\[0\]\.priority\): must be an integer/,
    );
  });
});
