/**
 * `svc exec`'s command: spawned with the terminal (or the streams svc was given), SIGINT and SIGTERM
 * passed on, and its end as an exit code, as a shell says it (a signal n as 128+n, not found 127).
 */
import { spawn, type StdioOptions } from 'node:child_process';
import { constants } from 'node:os';
import type { Readable } from 'node:stream';
import { UserError } from '../io/errors.js';
import type { IO, Writable } from '../io/process.js';

/** A command that could not be started: exit 127 (not found) or 126 (not runnable), as shells do. */
export class CommandNotStarted extends UserError {
  override readonly name = 'CommandNotStarted';
  override readonly exitCode: number;

  constructor(message: string, exitCode: number) {
    super(message);
    this.exitCode = exitCode;
  }
}

export interface ChildOptions {
  command: string;
  args: readonly string[];
  env: Record<string, string | undefined>;
  io: IO;
}

/** Runs the command to its end; resolves to its exit code. */
export function runChild({ command, args, env, io }: ChildOptions): Promise<number> {
  // The process's own streams are handed over as they are (a terminal stays a terminal); others
  // (svc run in-process) are piped to what svc was given.
  const own = [io.stdin === process.stdin, io.stdout === process.stdout, io.stderr === process.stderr];
  const stdio: StdioOptions = own.map((yes) => (yes ? 'inherit' : 'pipe'));
  // Off a terminal (CI) the command leads a process group of its own, so that what it started (the
  // workers of a test runner) goes with it. On a terminal it stays in the terminal's group: it may
  // read the keyboard, and Ctrl-C reaches all of it already.
  const group = (io.stdin as { isTTY?: boolean }).isTTY !== true && process.platform !== 'win32';
  const child = spawn(command, [...args], { cwd: io.cwd, env, stdio, detached: group });
  const kill = (signal: NodeJS.Signals) => {
    try {
      if (group && child.pid !== undefined) process.kill(-child.pid, signal);
      else child.kill(signal);
    } catch {
      // Gone already.
    }
  };
  if (!own[0]) child.stdin?.end();
  pipe(child.stdout, io.stdout);
  pipe(child.stderr, io.stderr);
  const forward = () => {
    const reason = io.signal.reason;
    kill(reason === 'SIGINT' || reason === 'SIGTERM' ? reason : 'SIGTERM');
  };
  // svc exiting while the command runs (a second Ctrl-C or SIGTERM when the command ignored the
  // first) takes the command with it: it is not left running against a stopped emulator.
  const killOnExit = () => {
    if (child.exitCode === null && child.signalCode === null) kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const settled = () => {
    io.signal.removeEventListener('abort', forward);
    process.off('exit', killOnExit);
  };
  return new Promise((resolve, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      settled();
      reject(notStarted(command, error));
    });
    child.once('spawn', () => {
      if (io.signal.aborted) forward();
      else io.signal.addEventListener('abort', forward, { once: true });
    });
    child.once('close', (code, signal) => {
      settled();
      // What the command started and left behind does not outlive it (off a terminal: its group).
      if (group) kill('SIGKILL');
      resolve(code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0));
    });
  });
}

function pipe(from: Readable | null, to: Writable): void {
  from?.setEncoding('utf8').on('data', (chunk: string) => to.write(chunk));
}

function notStarted(command: string, error: NodeJS.ErrnoException): Error {
  if (error.code === 'ENOENT') return new CommandNotStarted(`${command}: command not found.`, 127);
  if (error.code === 'EACCES') return new CommandNotStarted(`${command}: permission denied.`, 126);
  return new CommandNotStarted(`${command} could not be started: ${error.message}.`, 126);
}
