import { readdir } from 'node:fs/promises';
import { describe, expect, test } from 'vitest';
import { parseDuration } from '../../src/cli/commands/serve.js';
import { UsageError } from '../../src/cli/io/errors.js';
import { runSvc } from '../helpers/cli.js';
import { startEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

describe('parseDuration', () => {
  test.each([
    ['90s', 90_000],
    ['30m', 1_800_000],
    ['2h', 7_200_000],
    ['1500ms', 1500],
    ['45', 45_000],
    ['1.5s', 1500],
    [' 2h ', 7_200_000],
  ])('%j is %i ms', (text, ms) => {
    expect(parseDuration(text, '--transaction-ttl')).toBe(ms);
  });

  test.each(['nope', '', 's', '10d', '-5s', '1h30m', '2 h', '1e3', '0x10'])(
    '%j is a usage error naming the flag and the value',
    (text) => {
      let thrown: unknown;
      try {
        parseDuration(text, '--transaction-ttl');
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(UsageError);
      expect((thrown as UsageError).exitCode).toBe(2);
      expect((thrown as UsageError).message).toBe(
        `--transaction-ttl takes a duration such as 90s, 30m or 2h, not "${text}".`,
      );
    },
  );
});

describe('svc serve --transaction-ttl', () => {
  /** Runs serve in-process; aborted after a while so that a serve which does start cannot hang the test. */
  async function serve(args: string[]) {
    const cwd = await tempDir();
    const signal = AbortSignal.timeout(5000);
    const result = await runSvc(['serve', '--port', '0', ...args], { cwd, signal });
    return { ...result, cwd, aborted: signal.aborted };
  }

  test('a value that is not a duration exits 2 before starting anything', async () => {
    const result = await serve(['--transaction-ttl', 'nope']);
    expect(result.aborted).toBe(false);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('Error: --transaction-ttl takes a duration such as 90s, 30m or 2h, not "nope".\n');
    // Nothing was started: no .svc folder, no data file.
    expect(await readdir(result.cwd)).toEqual([]);
  });

  test('with --json the usage error is a JSON document', async () => {
    const result = await serve(['--transaction-ttl', '3 days', '--json']);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stderr)).toEqual({
      // Shaped as a problem (issue 31): its type and exit code beside the title and detail.
      error: {
        type: 'urn:svc:cli:usage-error',
        title: 'Usage error',
        detail: '--transaction-ttl takes a duration such as 90s, 30m or 2h, not "3 days".',
        exit_code: 2,
      },
    });
  });

  test('a duration under one second is a usage error (exit 2), and nothing is written', async () => {
    const result = await serve(['--transaction-ttl', '500ms']);
    expect(result.aborted).toBe(false);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--transaction-ttl must be at least 1s/);
    expect(await readdir(result.cwd)).toEqual([]);
  });
});

describe('svc serve: the emulator refuses an option', () => {
  async function serve(args: string[], env: Record<string, string> = {}) {
    const cwd = await tempDir();
    const result = await runSvc(['serve', ...args], { cwd, env, signal: AbortSignal.timeout(5000) });
    return { ...result, cwd };
  }

  // The emulator names its options (options.managementKey); svc serve says them as its own flags. (A bad
  // --port never reaches it: the CLI refuses it as a usage error, see usage-checks.test.ts.)
  test.each([
    [
      ['--port', '0', '--management-key', 'short'],
      {},
      'Error: --management-key must be 16 to 256 characters of letters, digits, "_", "-" or ".".\n',
    ],
    [
      ['--port', '0', '--management-key', 'same-key-for-both-1', '--private-key', 'same-key-for-both-1'],
      {},
      'Error: --private-key must differ from --management-key.\n',
    ],
    [
      ['--port', '0'],
      { SVC_MASTER_KEY: 'c2hvcnQ=' },
      'Error: SVC_MASTER_KEY must be the base64 of exactly 32 bytes (e.g. `openssl rand -base64 32`).\n',
    ],
  ])('%j names the flag, exit 1', async (args, env, stderr) => {
    const result = await serve(args, env);
    expect(result.stderr).toBe(stderr);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
  });

  test.runIf(process.platform === 'linux')(
    '--data under /proc is one line and exit 1, not a start that never ends',
    async () => {
      const result = await serve(['--port', '0', '--data', '/proc/svc-no-such-folder/data.json']);
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(/^Error: .*\/proc\/svc-no-such-folder/);
    },
  );

  test('a port in use names --port', async () => {
    const running = await startEmulator({ inMemory: true });
    const port = new URL(running.url).port;
    const result = await serve(['--port', port, '--in-memory']);
    expect(result.stderr).toBe(
      `Error: Port ${port} on 127.0.0.1 is already in use (another svc serve?). Stop it, or choose another --port (0 picks a free one).\n`,
    );
    expect(result.code).toBe(1);
  });
});
