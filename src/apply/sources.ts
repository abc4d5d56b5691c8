import { createHash } from 'node:crypto';
import path from 'node:path';
import { parse as parseJs } from 'acorn';
import { OutsideFolderError, readRegularFile, UnreadableFileError } from '../requests/index.js';

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * svc.yaml's text, or why it cannot be read, in words (code and .env files are read by src/requests,
 * with the same checks): a regular file of at most 5 MB, in its own folder once symlinks are resolved
 * unless `allowOutside`.
 */
export async function readSource(
  absolute: string,
  allowOutside = false,
): Promise<{ text: string } | { error: string; outside: boolean }> {
  const within = allowOutside ? {} : { within: path.dirname(absolute) };
  try {
    return { text: await readRegularFile(absolute, 'config', within) };
  } catch (error) {
    if (!(error instanceof UnreadableFileError)) throw error;
    return { error: error.reason, outside: error instanceof OutsideFolderError };
  }
}

/**
 * Where code does not parse, as `line:column` (1-based) and acorn's message; undefined when it
 * parses. Code is checked as the platform loads it (a CommonJS module body), so that a save with a
 * syntax error is reported at the user's own file and line and never sent.
 */
export function syntaxError(code: string): { line: number; column: number; message: string } | undefined {
  try {
    parseJs(code, {
      ecmaVersion: 'latest',
      sourceType: 'script',
      allowReturnOutsideFunction: true,
      allowHashBang: true,
    });
    return undefined;
  } catch (error) {
    const loc = (error as { loc?: { line: number; column: number } }).loc;
    const message = (error as Error).message.replace(/ \(\d+:\d+\)$/, '');
    return { line: loc?.line ?? 1, column: (loc?.column ?? 0) + 1, message };
  }
}

/** `file` as the user would type it from `cwd`: relative, unless climbing out makes it longer (`/dev/urandom`). */
export function displayPath(absolute: string, cwd: string): string {
  const relative = path.relative(cwd, absolute);
  if (relative === '' || path.isAbsolute(relative)) return absolute;
  return relative.startsWith('..') && absolute.length < relative.length ? absolute : relative;
}
