import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseJs } from 'acorn';

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** svc.yaml's text, or why it cannot be read, in words (code and .env files are read by src/resources). */
export async function readSource(absolute: string): Promise<{ text: string } | { error: string }> {
  try {
    return { text: await readFile(absolute, 'utf8') };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder' : (error as Error).message;
    return { error: `cannot read ${absolute}: ${reason}` };
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

/** `file` as the user would type it from `cwd`. */
export function displayPath(absolute: string, cwd: string): string {
  const relative = path.relative(cwd, absolute);
  return relative === '' || path.isAbsolute(relative) ? absolute : relative;
}
