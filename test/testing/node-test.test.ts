import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const suite = fileURLToPath(new URL('./node-suite/svc-testing.mjs', import.meta.url));

describe('svc/testing from the built package', () => {
  it('runs a node:test suite that imports svc/testing', async () => {
    const child = spawn(process.execPath, ['--test', '--test-reporter=tap', suite], { cwd: root });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(output).toMatch(/# pass 2/);
    expect(output).toMatch(/# fail 0/);
    expect(code).toBe(0);
  }, 60_000);
});
