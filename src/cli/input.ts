import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { UsageError, UserError } from './errors.js';
import type { IO } from './io.js';

/** A whole-number flag value, or a usage error naming the flag. */
export function intOption(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} must be a whole number, not "${value}".`);
  return Number(value);
}

/**
 * The text of an input flag: inline, `@file` (relative to cwd), or `-` for stdin. With no flag
 * at all, stdin when it is piped; `undefined` when there is nothing to read.
 */
export async function readInput(value: string | undefined, io: IO, flag: string): Promise<string | undefined> {
  if (value === undefined) {
    if (io.stdin.isTTY) return undefined;
    // Nothing piped in (CI, `< /dev/null`) is no input at all, not an empty one.
    const piped = await readStdin(io);
    return piped === '' ? undefined : piped;
  }
  if (value === '-') return readStdin(io);
  if (value.startsWith('@')) {
    const file = path.resolve(io.cwd, value.slice(1));
    try {
      return await readFile(file, 'utf8');
    } catch (error) {
      throw new UserError(`Cannot read ${flag} file ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}.`);
    }
  }
  return value;
}

/** Like readInput, parsed as JSON; the error says which flag held what. */
export async function readJsonInput(value: string | undefined, io: IO, flag: string): Promise<unknown> {
  const text = await readInput(value, io, flag);
  if (text === undefined || text.trim() === '') throw new UsageError(`Give ${flag} as JSON, @file or - (stdin), or pipe JSON in.`);
  return parseJson(text, flag);
}

export function parseJson(text: string, flag: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${flag} is not valid JSON (${(error as Error).message}).`);
  }
}

async function readStdin(io: IO): Promise<string> {
  let text = '';
  for await (const chunk of io.stdin) text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
  return text;
}
