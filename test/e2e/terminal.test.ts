import { describe, expect, test } from 'vitest';
import { startEmulator } from '../helpers/emulator.js';
import { plain, svcInPty } from '../helpers/pty.js';

describe('svc in an 80-column terminal (a real pseudo-terminal)', () => {
  test('a list keeps every id whole and keeps a gap between columns', async () => {
    const emu = await startEmulator({ inMemory: true });
    for (const name of ['payments-backend-with-a-long-name', 'reporting']) {
      const created = await emu.call('POST', '/applications', {
        body: { name, type: 'private', permissions: ['token:create', 'token:read', 'token:update', 'token:delete', 'token:use'] },
      });
      expect(created.status).toBe(201);
    }
    const listed = await emu.call('GET', '/applications?size=100');
    const ids: string[] = listed.body.data.map((app: { id: string }) => app.id);

    const run = svcInPty(['applications', 'list'], { cwd: emu.dir, columns: 80, env: { SVC_BASE_URL: emu.url, SVC_MANAGEMENT_KEY: emu.managementKey } });
    expect(await run.exited).toBe(0);
    const screen = plain(run.output());
    for (const line of screen.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    for (const id of ids) expect(screen).toContain(id);
    expect(screen).toContain('payments-backend-with-a-long-name');
    expect(screen).not.toContain('…');
  });
});
