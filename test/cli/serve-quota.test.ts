import { readdir } from 'node:fs/promises';
import { describe, expect, test } from 'vitest';
import { formatSize, parseSize } from '../../src/api/quotas.js';
import { quotaOptions } from '../../src/cli/serve/quota-flags.js';
import { runSvc } from '../helpers/cli.js';
import { http, type HttpResult } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/wait.js';

describe('sizes', () => {
  test.each([
    ['512MB', 512 * 1024 * 1024],
    ['1GB', 1024 * 1024 * 1024],
    ['1.5 gb', 1.5 * 1024 * 1024 * 1024],
    ['64kb', 64 * 1024],
    ['2MiB', 2 * 1024 * 1024],
    ['1048576', 1048576],
    [' 10 B ', 10],
  ])('%j is %i bytes', (text, bytes) => {
    expect(parseSize(text)).toBe(bytes);
  });

  test.each(['', 'MB', 'lots', '0MB', '0', '-1GB', '1e3', '1 PB', '1,5GB', '0.1B', '99999999999TB'])(
    '%j is no size',
    (text) => {
      expect(parseSize(text)).toBeUndefined();
    },
  );

  test.each([
    [512, '512 B'],
    [1536, '1.5 KB'],
    [1024 * 1024, '1 MB'],
    [256 * 1024 * 1024, '256 MB'],
    [1024 * 1024 * 1024, '1 GB'],
  ])('%i bytes are said %j', (bytes, text) => {
    expect(formatSize(bytes)).toBe(text);
  });
});

describe('--quota', () => {
  test('KIND=SIZE, repeatable or comma-separated, the last of a kind kept', () => {
    expect(quotaOptions({})).toEqual({});
    expect(quotaOptions({ quota: ['tokens=1GB', 'tenant=512MB,total=2GB', 'tokens=2GB'] })).toEqual({
      quotas: { tokens: 2 * 1024 ** 3, tenant: 512 * 1024 ** 2, total: 2 * 1024 ** 3 },
    });
  });

  /** Runs serve in-process; aborted after a while so that a serve which does start cannot hang the test. */
  async function serve(args: string[]) {
    const cwd = await tempDir();
    const signal = AbortSignal.timeout(5000);
    const result = await runSvc(['serve', '--port', '0', ...args], { cwd, signal });
    return { ...result, cwd, aborted: signal.aborted };
  }

  test.each([
    ['tokens=lots', 'Error: --quota tokens takes a size above 0 such as 512MB or 1GB, not "lots".\n'],
    ['tokens=0', 'Error: --quota tokens takes a size above 0 such as 512MB or 1GB, not "0".\n'],
    [
      'disk=1GB',
      'Error: --quota takes KIND=SIZE with KIND one of tokens, results, transactions, resources, tenant, total, not "disk=1GB".\n',
    ],
    [
      '1GB',
      'Error: --quota takes KIND=SIZE with KIND one of tokens, results, transactions, resources, tenant, total, not "1GB".\n',
    ],
  ])(
    '--quota %s is one line and exit 2 (a usage error, as every flag is), before anything starts',
    async (value, stderr) => {
      const result = await serve(['--quota', value]);
      expect(result.aborted).toBe(false);
      expect(result.stderr).toBe(stderr);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(await readdir(result.cwd)).toEqual([]);
    },
  );

  test('a quota set by the flag is what a full tenant is refused by, named as the flag', async () => {
    const cwd = await tempDir();
    const abort = new AbortController();
    let out = '';
    const privateKey = 'serve-quota-private-key';
    const running = runSvc(
      [
        'serve',
        '--port',
        '0',
        '--in-memory',
        '--log-format',
        'json',
        '--private-key',
        privateKey,
        '--quota',
        'tokens=4KB',
      ],
      { cwd, signal: abort.signal, onStdout: (chunk) => (out += chunk) },
    );
    try {
      const url = await eventually(() => {
        const listening = /"event":"listening","url":"([^"]+)"/.exec(out);
        expect(listening).not.toBeNull();
        expect(out).toContain('"event":"ready"');
        return listening![1]!;
      }, 10_000);
      const body = { type: 'token', data: 'x'.repeat(1000) };
      const statuses: number[] = [];
      let refused: HttpResult | undefined;
      while (refused === undefined && statuses.length < 10) {
        const made = await http(`${url}/tokens`, 'POST', { key: privateKey, body });
        statuses.push(made.status);
        if (made.status !== 201) refused = made;
      }
      // About 1.5 KB each (the data sealed, and the token's fields): two fit in 4 KB.
      expect(statuses).toEqual([201, 201, 507]);
      expect(refused!.body.detail).toMatch(/of 4 KB \(quota tokens\)\. .*svc serve --quota tokens=8KB/);
    } finally {
      abort.abort();
      await running;
    }
  });
});
