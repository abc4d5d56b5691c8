import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const APPLY = fileURLToPath(new URL('../../src/apply/', import.meta.url));

// apply talks to the target only through the API client, the same path for the emulator and a
// remote server: it never reaches into the emulator, the CLI or the UI.
test('src/apply imports only itself, src/resources, src/client, src/api and packages', async () => {
  const files = (await readdir(APPLY)).filter((file) => file.endsWith('.ts'));
  expect(files.length).toBeGreaterThan(5);
  const crossings: string[] = [];
  for (const file of files) {
    const text = await readFile(path.join(APPLY, file), 'utf8');
    for (const [, target] of text.matchAll(/from '(\.\.\/[^']+)'/g)) {
      if (!/^\.\.\/(resources|client|api)\//.test(target!)) crossings.push(`${file} -> ${target}`);
    }
  }
  expect(crossings).toEqual([]);
});
