import { existsSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { makeDirectory } from '../../src/lib/make-directory.js';
import { tempDir } from '../helpers/temp.js';

describe('makeDirectory', () => {
  test('makes every missing level, with the mode given; an existing folder is fine', async () => {
    const root = await tempDir();
    const dir = path.join(root, 'a', 'b', 'c');
    await makeDirectory(dir, 0o700);
    expect(statSync(dir).isDirectory()).toBe(true);
    expect(statSync(path.join(root, 'a')).mode & 0o777).toBe(0o700);
    await makeDirectory(dir);
    await makeDirectory(root);
  });

  test('a file in the way is ENOTDIR, naming it', async () => {
    const root = await tempDir();
    await writeFile(path.join(root, 'file'), 'x');
    await expect(makeDirectory(path.join(root, 'file', 'below'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  test.runIf(existsSync('/proc/self'))(
    'a folder under /proc is refused at once (Node mkdir -p would spin for ever)',
    async () => {
      await expect(makeDirectory('/proc/svc-no-such/x')).rejects.toMatchObject({ code: 'ENOENT' });
    },
  );
});
