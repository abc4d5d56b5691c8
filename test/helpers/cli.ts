import { Readable } from 'node:stream';
import { expect } from 'vitest';
import { runSvc as run } from '../../src/cli/main.js';
import type { CommandGroup, RegisteredCommand } from '../../src/cli/registry.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON. */
  json<T = any>(): T;
}

export interface CliOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  stdin?: string;
  tty?: boolean;
  /** stderr is a terminal too (a person watching: the target line before a change shows). */
  stderrTty?: boolean;
  signal?: AbortSignal;
  /** Told of each chunk of stdout as it is written (a command that runs until stopped). */
  onStdout?: (chunk: string) => void;
  /** Commands to offer instead of svc's own (to test the program around them). */
  commands?: (RegisteredCommand | CommandGroup)[];
}

/** Splits a command line like a shell would for simple cases: spaces, single and double quotes. */
export function splitArgs(line: string): string[] {
  const args: string[] = [];
  const pattern = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (const match of line.matchAll(pattern)) args.push(match[1] ?? match[2] ?? match[3]!);
  return args;
}

/**
 * Runs the CLI in-process with captured output. The environment is only what is given (plus a
 * HOME inside `cwd`), so nothing from the machine's own config or SVC_* variables leaks in.
 */
export async function runSvc(argv: string | string[], options: CliOptions): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await run(
    typeof argv === 'string' ? splitArgs(argv) : argv,
    {
      stdout: {
        write: (chunk: string) => {
          stdout += chunk;
          options.onStdout?.(chunk);
        },
        isTTY: options.tty ?? false,
        columns: 120,
      },
      stderr: { write: (chunk: string) => (stderr += chunk), ...(options.stderrTty && { isTTY: true }) },
      stdin: Readable.from(options.stdin === undefined ? [] : [options.stdin]) as never,
      env: { HOME: options.cwd, XDG_CONFIG_HOME: `${options.cwd}/.config`, ...options.env },
      cwd: options.cwd,
      signal: options.signal ?? new AbortController().signal,
    },
    options.commands,
  );
  return { code, stdout, stderr, json: () => JSON.parse(stdout) };
}

/** An expected failure: exactly one line on stderr (matching, or equal to a string), nothing on stdout, no stack trace. */
export function expectOneLineError(result: CliResult, code: number, pattern: RegExp | string): void {
  expect(result.code, result.stderr).toBe(code);
  expect(result.stdout).toBe('');
  if (typeof pattern === 'string') expect(result.stderr).toBe(`${pattern}\n`);
  else expect(result.stderr.trimEnd()).toMatch(pattern);
  expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(result.stderr).not.toContain('    at ');
}

/** The `label  value` lines of a human `fields` output (first line of each value). */
export function fieldsOf(stdout: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const match = /^(\S+(?: \S+)?)\s{2,}(.*)$/.exec(line);
    if (match) fields[match[1]!] = match[2]!;
  }
  return fields;
}
