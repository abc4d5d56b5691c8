import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';

export const SVC_BIN = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

export interface SvcProcess {
  child: ChildProcessWithoutNullStreams;
  /** Every stdout line so far. */
  lines: string[];
  stderr(): string;
  /** Resolves with the first stdout line (from now on or already seen) that matches. */
  waitForLine(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs `svc` (the built bin) as a real process, killed when the test ends. */
export function spawnSvc(args: string[], options: { cwd: string; env?: Record<string, string> }): SvcProcess {
  const child = spawn(process.execPath, [SVC_BIN, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', HOME: options.cwd, XDG_CONFIG_HOME: `${options.cwd}/.config`, ...options.env },
  });
  const lines: string[] = [];
  const waiters: { match: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    for (const waiter of [...waiters]) {
      if (waiter.match(line)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    child,
    lines,
    stderr: () => stderr,
    exited,
    waitForLine(match, timeoutMs = 30_000) {
      const seen = lines.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(new Error(`no matching line in ${timeoutMs} ms; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`)),
          timeoutMs,
        );
        waiters.push({ match, resolve: (line) => (clearTimeout(timer), resolve(line)) });
        void exited.then(() => {
          clearTimeout(timer);
          reject(new Error(`svc exited before a matching line; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`));
        });
      });
    },
  };
}

/** Runs `svc` to completion and returns its output. */
export async function execSvc(args: string[], options: { cwd: string; env?: Record<string, string> }) {
  const proc = spawnSvc(args, options);
  const { code } = await proc.exited;
  return { code, stdout: proc.lines.join('\n'), stderr: proc.stderr() };
}
