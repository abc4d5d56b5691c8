import { readFileSync } from 'node:fs';

/** The version of svc, read from its package.json (two folders up from src/lib or dist/lib). */
export function packageVersion(): string {
  const file = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}
