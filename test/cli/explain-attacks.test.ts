/** Hostile input to `svc explain` and `svc access test` (issue 30): bounded, one line, terminal-safe. */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { createApplication, startEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

const EVIL = 'x\u001b]52;c;cHduZWQ=\u0007\u001b[2J\u009b31m';

async function setup() {
  const emu = await startEmulator({ inMemory: true });
  const cwd = await tempDir();
  const app = await createApplication(emu, {
    name: `app${EVIL}`,
    type: 'private',
    permissions: [],
    rules: [{ priority: 1, container: '/pci/', transform: 'mask', permissions: ['token:read'], description: EVIL }],
  });
  const svc = (argv: string[], extra: { tty?: boolean } = {}) =>
    runSvc([...argv, '--base-url', emu.url, '--management-key', emu.managementKey], { cwd, ...extra });
  return { emu, cwd, app, svc };
}

describe('svc explain with hostile names and descriptions', () => {
  test('a stored refusal prints no escape from an Application name or a rule description', async () => {
    const { emu, app, svc } = await setup();
    const refused = await emu.call('GET', '/applications', { key: app.key, headers: { 'svc-trace-id': 'evil-1' } });
    expect(refused.status).toBe(403);
    for (const tty of [false, true]) {
      const shown = await svc(['explain', 'evil-1'], { tty });
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).not.toMatch(/\u001b\]|\u0007|\u001b\[2J|\u009b/);
    }
  });
});

describe('svc access test with a hostile file', () => {
  const cases = async (cwd: string, text: string) => {
    await writeFile(path.join(cwd, 'm.yaml'), text);
    return 'm.yaml';
  };

  test('an alias bomb, too many cases and a huge string each end in one line', async () => {
    const { cwd, svc } = await setup();
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x","x"]',
      ...Array.from({ length: 8 }, (_, i) => {
        const prev = i === 0 ? 'a' : `b${i - 1}`;
        return `b${i}: &b${i} [${Array(10).fill(`*${prev}`).join(',')}]`;
      }),
      'cases: *b7',
    ].join('\n');
    expectOneLineError(await svc(['access', 'test', await cases(cwd, bomb)]), 1, /alias|m\.yaml/i);
    const many = `cases:\n${'  - { application: a, permission: token:read, expect: deny }\n'.repeat(100_000)}`;
    expectOneLineError(await svc(['access', 'test', await cases(cwd, many)]), 1, /m\.yaml/);
    const huge = `cases:\n  - { application: "${'y'.repeat(2_000_000)}", permission: token:read, expect: deny }\n`;
    expectOneLineError(await svc(['access', 'test', await cases(cwd, huge)]), 1, /m\.yaml/);
    const escape = `cases:\n  - { application: "${EVIL.replace(/\u001b/g, '\\e')
      .replace(/\u0007/g, '\\a')
      .replace(/\u009b/g, '\\x9b')}", permission: token:read, expect: deny }\n`;
    const result = await svc(['access', 'test', await cases(cwd, escape)]);
    expect(result.stdout + result.stderr).not.toMatch(/\u001b\]|\u0007|\u001b\[2J|\u009b/);
  }, 60_000);
});
