import { spawn } from 'node:child_process';
import { onTestFinished } from 'vitest';
import { SVC_BIN } from './process.js';

export interface PtyRun {
  /** Everything the terminal showed so far (both streams, as the terminal got them; \r\n turned into \n). */
  output(): string;
  /** Types into the terminal. */
  type(text: string): void;
  /** Resolves once the output holds `text`. */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<void>;
  exited: Promise<number | null>;
}

/**
 * Runs `svc` (the built bin) under a real pseudo-terminal `columns` wide, made by util-linux `script`, so
 * stdin and stdout are TTYs as in a user's terminal. Killed when the test ends.
 */
export function svcInPty(
  args: string[],
  options: { cwd: string; env?: Record<string, string>; columns?: number },
): PtyRun {
  const quoted = [process.execPath, SVC_BIN, ...args].map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(' ');
  const child = spawn('script', ['-qfec', `stty cols ${options.columns ?? 80} rows 50; exec ${quoted}`, '/dev/null'], {
    cwd: options.cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: options.cwd,
      XDG_CONFIG_HOME: `${options.cwd}/.config`,
      TERM: 'xterm-256color',
      ...options.env,
    },
  });
  let output = '';
  const waiters = new Set<() => void>();
  const take = (chunk: Buffer) => {
    output += chunk.toString().replaceAll('\r\n', '\n');
    for (const waiter of [...waiters]) waiter();
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    output: () => output,
    type: (text) => child.stdin.write(text),
    exited,
    waitFor(text, timeoutMs = 30_000) {
      const seen = () => (typeof text === 'string' ? output.includes(text) : text.test(output));
      if (seen()) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`the terminal never showed ${String(text)}; it showed:\n${output}`));
        }, timeoutMs);
        const check = () => {
          if (!seen()) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
    },
  };
}

/** The terminal's text without colour and cursor escapes. */
export function plain(text: string): string {
  return text.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');
}
