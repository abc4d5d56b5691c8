import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { svcInPty } from '../helpers/pty.js';
import { tempDir } from '../helpers/temp.js';

/** An SGR sequence that colours, bolds or dims (ink's cursor movements are not these). */
const STYLED = /\u001b\[(?:[0-9;]*;)?(?:1|2|3[0-7]|9[0-7]|38;[0-9;]+)m/;

describe('svc serve on a terminal: the dashboard keeps its promises', () => {
  test('NO_COLOR and FORCE_COLOR=0: no colour, bold or dim anywhere; the plain one has them', async () => {
    for (const env of [{ NO_COLOR: '1' }, { FORCE_COLOR: '0' }] as Record<string, string>[]) {
      const cwd = await tempDir();
      const run = svcInPty(['serve', '--port', '0', '--in-memory'], { cwd, columns: 120, env });
      await run.waitFor(/q quit/, 20_000);
      run.type('q');
      expect(await run.exited).toBe(0);
      expect(run.output(), JSON.stringify(env)).not.toMatch(STYLED);
    }
    const cwd = await tempDir();
    const run = svcInPty(['serve', '--port', '0', '--in-memory'], { cwd, columns: 120 });
    await run.waitFor(/q quit/, 20_000);
    run.type('q');
    expect(await run.exited).toBe(0);
    expect(run.output()).toMatch(STYLED);
  });

  test('--in-memory shows the export line and the webhook secret (masked until k)', async () => {
    const cwd = await tempDir();
    const run = svcInPty(['serve', '--port', '0', '--in-memory'], { cwd, columns: 200 });
    await run.waitFor(/q quit/, 20_000);
    expect(run.output()).toMatch(
      /export SVC_BASE_URL=http:\/\/127\.0\.0\.1:\d+ SVC_MANAGEMENT_KEY=key_local_mgt_•{8} SVC_API_KEY=key_local_pvt_•{8}/,
    );
    expect(run.output()).toMatch(/webhook secret\s+•{8}/);
    run.type('k');
    await run.waitFor(
      /SVC_MANAGEMENT_KEY=key_local_mgt_[A-Za-z0-9]{8,} SVC_API_KEY=key_local_pvt_[A-Za-z0-9]{8,}/,
      10_000,
    );
    run.type('q');
    expect(await run.exited).toBe(0);
  });

  test('a restart with a store shows the keys of its credentials file, and k still shows them', async () => {
    const cwd = await tempDir();
    await mkdir(path.join(cwd, '.svc'), { recursive: true });
    const first = svcInPty(['serve', '--port', '0'], { cwd, columns: 160 });
    await first.waitFor(/q quit/, 20_000);
    first.type('q');
    expect(await first.exited).toBe(0);

    const again = svcInPty(['serve', '--port', '0'], { cwd, columns: 160 });
    await again.waitFor(/q quit/, 20_000);
    expect(again.output()).toMatch(/management\s+key_local_mgt_•{8}/);
    expect(again.output()).toMatch(/private\s+key_local_pvt_•{8}/);
    expect(again.output()).toContain('k keys');
    // Not in memory: the CLI run here finds the credentials file; no export line.
    expect(again.output()).not.toContain('export SVC_BASE_URL');
    again.type('k');
    await again.waitFor(/management\s+key_local_mgt_[A-Za-z0-9]{8,}/, 10_000);
    again.type('q');
    expect(await again.exited).toBe(0);
  });
});
