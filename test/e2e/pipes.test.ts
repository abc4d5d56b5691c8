import { spawn } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { SVC_BIN } from '../helpers/process.js';
import { tempDir } from '../helpers/temp.js';

/** Runs svc with a stdout whose reader has gone (`svc ... | head -0`): every write meets EPIPE. */
async function withClosedStdout(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const cwd = await tempDir();
  const child = spawn(process.execPath, [SVC_BIN, ...args], { cwd, env: { PATH: process.env.PATH ?? '', HOME: cwd } });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', (exit) => resolve(exit)));
  return { code, stderr };
}

describe('svc piped into a reader that stops early (| head -1)', () => {
  test.each(['reactors create --help', '--help', 'applications --help', 'tokens list --help'])(
    'svc %s exits quietly',
    async (line) => {
      const { code, stderr } = await withClosedStdout(line.split(' '));
      expect(stderr).toBe('');
      expect(code).toBe(0);
    },
  );
});
