import { readFileSync } from 'node:fs';

/** The package version, read from package.json (two folders up from src/cli or dist/cli). */
export function packageVersion(): string {
  const file = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}
