import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'vitest';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

describe('svc serve --record, --replay, --on-miss', () => {
  it('bad combinations and folders that cannot be used are one line, before anything starts', async () => {
    const cwd = await tempDir();
    const serve = (flags: string) => runSvc(`serve --in-memory --port 0 ${flags}`, { cwd });
    expectOneLineError(
      await serve('--record a --replay b'),
      2,
      'Error: --record and --replay cannot be used together; to record what a replay misses, use --replay DIR --on-miss record.',
    );
    expectOneLineError(await serve('--on-miss record'), 2, /--on-miss goes with --replay DIR/);
    expectOneLineError(
      await serve('--replay missing'),
      1,
      `Error: --replay: ${path.join(cwd, 'missing')} cannot be read as a folder of cassettes: it does not exist.`,
    );
    await writeFile(path.join(cwd, 'bad.json'), '{"version": 1, "origin": ');
    expectOneLineError(await serve('--replay .'), 1, /^Error: --replay: .*bad\.json is not JSON \(/);
  });
});
