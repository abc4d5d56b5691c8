import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { svcInPty } from '../helpers/pty.js';
import { tempDir } from '../helpers/temp.js';

const SVC_YAML = `reactors:
  hello:
    code: reactors/hello.js
`;

describe('svc serve on a terminal: the dashboard', () => {
  test('shows the URL and what svc.yaml put on the emulator; q stops serve with exit 0', async () => {
    const cwd = await tempDir();
    await mkdir(path.join(cwd, 'reactors'));
    await writeFile(path.join(cwd, 'reactors', 'hello.js'), 'module.exports = async () => ({ raw: {} });\n');
    await writeFile(path.join(cwd, 'svc.yaml'), SVC_YAML);
    const run = svcInPty(['serve', '--port', '0', '--in-memory'], { cwd, columns: 120 });
    await run.waitFor(/http:\/\/127\.0\.0\.1:\d+/, 20_000);
    await run.waitFor('reactors.hello created', 20_000);
    // Keys are masked until asked for.
    expect(run.output()).not.toMatch(/key_local_mgt_[A-Za-z0-9]{8}/);
    run.type('q');
    expect(await run.exited).toBe(0);
    // The dashboard, not the lines serve prints elsewhere.
    expect(run.output()).not.toContain('svc emulator listening on');
  });

  test('with CI set, the same terminal gets the lines of serve (no dashboard), and Ctrl-C stops it', async () => {
    const cwd = await tempDir();
    const run = svcInPty(['serve', '--port', '0', '--in-memory'], { cwd, env: { CI: 'true' } });
    await run.waitFor('svc emulator listening on', 20_000);
    await run.waitFor('Stop: Ctrl-C', 20_000);
    run.type('\u0003');
    expect(await run.exited).toBe(0);
  });
});
