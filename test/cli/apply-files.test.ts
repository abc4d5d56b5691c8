/**
 * The files the CLI reads for the user (issue 26, item 5), as a user sees it: one line, a non-zero
 * exit, never a hang; `--allow-outside-project` lets svc.yaml name files elsewhere.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { startEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

const CODE = 'module.exports = async () => ({ raw: 1 });\n';

describe('svc apply and the files svc.yaml names', () => {
  test('a FIFO named as code is one line and exit 1, not a hang; nothing is sent', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'svc.yaml'), 'reactors:\n  r:\n    code: pipe.js\n');
    expect(spawnSync('mkfifo', [path.join(cwd, 'pipe.js')]).status).toBe(0);
    const result = await runSvc(['apply', '--base-url', emu.url, '--management-key', emu.managementKey], { cwd });
    expectOneLineError(
      result,
      1,
      'Error: svc.yaml:3:11 reactors.r.code: cannot read pipe.js: it is a FIFO (named pipe), not a regular file',
    );
    expect(emu.events.filter((event) => event.type === 'request' && event.method === 'POST')).toEqual([]);
  });

  test("svc's own files (.svc/state.json, keys.json, apply.lock) as FIFOs or devices: one line, no hang", async () => {
    const emu = await startEmulator({ inMemory: true });
    const target = ['--base-url', emu.url, '--management-key', emu.managementKey];
    for (const name of ['state.json', 'keys.json', 'apply.lock']) {
      const cwd = await tempDir();
      await writeFile(path.join(cwd, 'svc.yaml'), 'reactors: {}\n');
      await mkdir(path.join(cwd, '.svc'));
      expect(spawnSync('mkfifo', [path.join(cwd, '.svc', name)]).status).toBe(0);
      const result = await runSvc(['apply', '--dry-run', ...target], { cwd });
      // A FIFO lock is no owner: replaced, and the apply goes on; a FIFO state or keys file is refused.
      if (name === 'apply.lock') expect(result.code, result.stderr).toBe(0);
      else {
        expect(result.code).toBe(1);
        expect(result.stderr.trim().split('\n')).toHaveLength(1);
        expect(result.stderr).toMatch(/FIFO \(named pipe\), not a regular file/);
      }
    }
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'svc.yaml'), 'reactors: {}\n');
    await mkdir(path.join(cwd, '.svc'));
    await symlink('/proc/self/environ', path.join(cwd, '.svc', 'state.json'));
    const environ = await runSvc(['apply', '--dry-run', ...target], { cwd });
    expect(environ.code).toBe(1);
    expect(environ.stderr).not.toMatch(/=/);
  });

  test('a code file outside the project needs --allow-outside-project', async () => {
    const emu = await startEmulator({ inMemory: true });
    const root = await tempDir();
    const cwd = path.join(root, 'project');
    await mkdir(cwd);
    await writeFile(path.join(root, 'shared.js'), CODE);
    await writeFile(path.join(cwd, 'svc.yaml'), 'reactors:\n  r:\n    code: ../shared.js\n');
    const target = ['--base-url', emu.url, '--management-key', emu.managementKey];
    const refused = await runSvc(['apply', '--dry-run', ...target], { cwd });
    expectOneLineError(
      refused,
      1,
      `Error: svc.yaml:3:11 reactors.r.code: cannot read ../shared.js: it is outside ${cwd}; ` +
        'svc reads only files in the folder of svc.yaml (--allow-outside-project reads others)',
    );
    const allowed = await runSvc(['apply', '--dry-run', '--allow-outside-project', ...target], { cwd });
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout).toContain('+ create reactors.r');
  });
});

describe('@file flag values', () => {
  test('a FIFO, a device or a file over 5 MB is one line and exit 1', async () => {
    const cwd = await tempDir();
    expect(spawnSync('mkfifo', [path.join(cwd, 'pipe.json')]).status).toBe(0);
    await writeFile(path.join(cwd, 'big.json'), Buffer.alloc(5 * 1024 * 1024 + 1, 0x20));
    const tokenize = (data: string) =>
      runSvc(['tokenize', '--data', data, '--base-url', 'http://127.0.0.1:9', '--management-key', 'k'], { cwd });
    expectOneLineError(
      await tokenize('@pipe.json'),
      1,
      `Error: Cannot read --data file ${path.join(cwd, 'pipe.json')}: it is a FIFO (named pipe), not a regular file.`,
    );
    expectOneLineError(
      await tokenize('@/dev/zero'),
      1,
      'Error: Cannot read --data file /dev/zero: it is a device, not a regular file.',
    );
    expectOneLineError(
      await tokenize('@big.json'),
      1,
      `Error: Cannot read --data file ${path.join(cwd, 'big.json')}: it is larger than 5 MB.`,
    );
  });
});
