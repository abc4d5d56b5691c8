/**
 * `svc exec` when its command will not stop: a second SIGTERM or SIGINT to svc ends svc, and the
 * command with it (SIGKILL), rather than leaving the command running against a stopped emulator.
 */
import { describe, expect, onTestFinished, test } from 'vitest';
import { spawnSvc } from '../helpers/process.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/wait.js';

/** A command that ignores SIGINT and SIGTERM, prints its pid and runs until killed. */
const STUBBORN = [
  '--',
  process.execPath,
  '-e',
  "process.on('SIGINT', () => {}); process.on('SIGTERM', () => {}); console.log('pid ' + process.pid); setInterval(() => {}, 1000);",
];

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('svc exec: a command that ignores signals', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    test(`a second ${signal} ends svc and kills the command`, async () => {
      const cwd = await tempDir();
      const svc = spawnSvc(['exec', ...STUBBORN], { cwd });
      const pid = Number((await svc.waitForLine((line) => line.startsWith('pid '))).slice(4));
      onTestFinished(() => {
        if (alive(pid)) process.kill(pid, 'SIGKILL');
      });
      svc.child.kill(signal);
      // The first is passed on (and ignored): both still run.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(alive(pid)).toBe(true);
      svc.child.kill(signal);
      const { code } = await svc.exited;
      expect(code).toBe(signal === 'SIGINT' ? 130 : 143);
      await eventually(() => expect(alive(pid)).toBe(false), 10_000);
    });
  }
});

describe('svc exec: what the command started', () => {
  test('off a terminal, a process the command left behind is stopped with it', async () => {
    const cwd = await tempDir();
    // The command starts a grandchild that would run for a minute, prints its pid, and exits 4.
    const script = [
      "const { spawn } = require('node:child_process');",
      "const g = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });",
      "console.log('pid ' + g.pid);",
      'process.exit(4);',
    ].join(' ');
    const svc = spawnSvc(['exec', '--', process.execPath, '-e', script], { cwd });
    const pid = Number((await svc.waitForLine((line) => line.startsWith('pid '))).slice(4));
    onTestFinished(() => {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    });
    const { code } = await svc.exited;
    expect(code).toBe(4);
    await eventually(() => expect(alive(pid)).toBe(false), 10_000);
  });
});
