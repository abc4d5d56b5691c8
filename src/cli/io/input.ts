import path from 'node:path';
import { UnreadableFileError } from '../../requests/errors.js';
import { readRegularFile } from '../../requests/files.js';
import { UsageError, UserError } from './errors.js';
import type { IO } from './process.js';

/** A whole-number flag value, or a usage error naming the flag (and the range, when it has one). */
export function intOption(
  value: string | undefined,
  flag: string,
  range?: { min: number; max: number },
): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} must be a whole number, not "${value}".`);
  const number = Number(value);
  if (range && (number < range.min || number > range.max)) {
    throw new UsageError(`${flag} must be from ${range.min} to ${range.max}, not "${value}".`);
  }
  return number;
}

/** RFC 3339 as the API takes it: a date, a time with seconds, and a zone. */
const DATE_TIME =
  /^\d{4}-(\d{2})-(\d{2})[Tt ]([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$/;

/** An ISO 8601 date-time flag value as the API takes it, or a usage error naming the flag. */
export function dateTimeOption(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  const match = DATE_TIME.exec(value);
  const [month, day] = [Number(match?.[1]), Number(match?.[2])];
  if (!match || month < 1 || month > 12 || day < 1 || day > 31 || Number.isNaN(Date.parse(value))) {
    const example = '2030-01-01T00:00:00Z';
    throw new UsageError(`${flag} must be an ISO 8601 date-time with a time zone (e.g. ${example}), not "${value}".`);
  }
  return value;
}

/** An absolute http(s) URL flag value, or a usage error naming the flag. */
export function urlOption(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  let protocol: string | undefined;
  try {
    protocol = new URL(value).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new UsageError(`${flag} must be an absolute http or https URL, not "${value}".`);
  }
  return value;
}

/**
 * The text of an input flag: inline, `@file` (relative to cwd; a regular file of at most 5 MB), or `-` for stdin. With no flag
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
    // A regular file of at most the payload limit: a FIFO or a device would hang or never end.
    try {
      return await readRegularFile(file, flag);
    } catch (error) {
      if (!(error instanceof UnreadableFileError)) throw error;
      throw new UserError(`Cannot read ${flag} file ${file}: ${error.reason}.`);
    }
  }
  return value;
}

/** Like readInput, parsed as JSON; the error says which flag held what. */
export async function readJsonInput(value: string | undefined, io: IO, flag: string): Promise<unknown> {
  const text = await readInput(value, io, flag);
  if (text === undefined || text.trim() === '')
    throw new UsageError(`Give ${flag} as JSON, @file or - (stdin), or pipe JSON in.`);
  return parseJson(text, flag);
}

export function parseJson(text: string, flag: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${flag} is not valid JSON (${(error as Error).message}).`);
  }
}

/**
 * `--management-key -` and `--api-key -`: the key from the first line of stdin (trimmed), so that it stays
 * out of argv and shell history. Only one flag can read stdin.
 */
export async function readKeyFromStdin(flags: readonly string[], io: IO): Promise<string> {
  if (flags.length > 1) throw new UsageError(`${flags.join(' and ')} are both "-": only one of them can read stdin.`);
  const flag = flags[0] ?? '--management-key';
  const line = (await readStdin(io)).split(/\r?\n/)[0]?.trim() ?? '';
  if (line === '') throw new UsageError(`${flag} - read no key from stdin; pipe it in (e.g. \`${flag} - < key.txt\`).`);
  return line;
}

async function readStdin(io: IO): Promise<string> {
  let text = '';
  for await (const chunk of io.stdin) text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
  return text;
}
