/**
 * What svc.yaml may read (issue 26, item 5): files in its own folder (symlinks resolved) unless
 * allowed, regular files only, at most 5 MB; each refusal one line naming the file and svc.yaml's line.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, open, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { ApplyError } from '../../src/apply/errors.js';
import { loadConfig } from '../../src/apply/load.js';
import { tempDir } from '../helpers/temp.js';

const CODE = 'module.exports = async () => ({ raw: 1 });\n';
const HINT = 'svc reads only files in the folder of svc.yaml (--allow-outside-project reads others)';

/** A project in `<root>/project`, with `<root>/outside.js` beside it; svc.yaml names what `reactor` says. */
async function project(reactor: string) {
  const root = await tempDir();
  const dir = path.join(root, 'project');
  await mkdir(dir);
  await writeFile(path.join(root, 'outside.js'), CODE);
  await writeFile(path.join(dir, 'inside.js'), CODE);
  await writeFile(path.join(dir, 'svc.yaml'), `# a reactor\nreactors:\n  r:\n${reactor}`);
  const load = (options: { allowOutsideProject?: boolean } = {}) =>
    loadConfig('svc.yaml', { cwd: dir, env: {}, ...options });
  const failure = async (options: { allowOutsideProject?: boolean } = {}) => {
    const error = await load(options).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ApplyError);
    const message = (error as ApplyError).message;
    expect(message).not.toContain('\n');
    return message;
  };
  return { root, dir, load, failure };
}

describe('svc.yaml reads only files in its folder', () => {
  test('a path out of the folder is refused at its line, naming the flag that allows it', async () => {
    const { root, failure, load } = await project('    code: ../outside.js\n');
    expect(await failure()).toBe(
      `svc.yaml:4:11 reactors.r.code: cannot read ../outside.js: it is outside ${path.join(root, 'project')}; ${HINT}`,
    );
    expect((await load({ allowOutsideProject: true })).reactors[0]!.code.code).toBe(CODE);
  });

  test('a symlink in the folder to a file outside is refused, saying where it resolves to; one inside is read', async () => {
    const { root, dir, failure } = await project('    code: link.js\n    configuration: env-link\n');
    await symlink(path.join(root, 'outside.js'), path.join(dir, 'link.js'));
    await writeFile(path.join(dir, 'real.env'), 'A=1\n');
    await symlink('real.env', path.join(dir, 'env-link'));
    const message = await failure();
    expect(message).toContain(`svc.yaml:4:11 reactors.r.code: cannot read link.js: it is outside ${dir}`);
    expect(message).toContain(`(it resolves to ${path.join(root, 'outside.js')})`);
    expect(message).not.toContain('configuration');
  });

  test('svc.yaml itself may not be a symlink to a file elsewhere', async () => {
    const root = await tempDir();
    await writeFile(path.join(root, 'elsewhere.yaml'), 'reactors: {}\n');
    const linked = path.join(root, 'project');
    await mkdir(linked);
    await symlink(path.join(root, 'elsewhere.yaml'), path.join(linked, 'svc.yaml'));
    const error = await loadConfig('svc.yaml', { cwd: linked, env: {} }).catch((caught: unknown) => caught);
    expect((error as Error).message).toBe(
      `Cannot read svc.yaml: it is outside ${linked} (it resolves to ${path.join(root, 'elsewhere.yaml')}); ${HINT}.`,
    );
    const allowed = await loadConfig('svc.yaml', { cwd: linked, env: {}, allowOutsideProject: true });
    expect(allowed.reactors).toEqual([]);
  });
});

describe('svc.yaml reads only regular files of at most 5 MB', () => {
  test('configuration: /proc/self/environ is refused (the environment is not a .env file), even when outside is allowed', async () => {
    const { failure } = await project('    code: inside.js\n    configuration: /proc/self/environ\n');
    const message = await failure({ allowOutsideProject: true });
    expect(message).toMatch(
      /^svc\.yaml:5:20 reactors\.r\.configuration: cannot read \/proc\/self\/environ: it is in \/proc, not a file on disk$/,
    );
  });

  test('a FIFO is refused at once (no writer is waited for)', async () => {
    const { dir, failure } = await project('    code: pipe.js\n');
    const made = spawnSync('mkfifo', [path.join(dir, 'pipe.js')]);
    expect(made.status).toBe(0);
    expect(await failure()).toBe(
      'svc.yaml:4:11 reactors.r.code: cannot read pipe.js: it is a FIFO (named pipe), not a regular file',
    );
  });

  test('a device (/dev/urandom) and a folder are refused', async () => {
    const device = await project('    code: /dev/urandom\n');
    expect(await device.failure({ allowOutsideProject: true })).toBe(
      'svc.yaml:4:11 reactors.r.code: cannot read /dev/urandom: it is a device, not a regular file',
    );
    const folder = await project('    code: sub\n');
    await mkdir(path.join(folder.dir, 'sub'));
    expect(await folder.failure()).toBe(
      'svc.yaml:4:11 reactors.r.code: cannot read sub: it is a folder, not a regular file',
    );
  });

  test('a file over 5 MB is refused without being read past the limit (a sparse 1 GB file)', async () => {
    const { dir, failure } = await project('    code: huge.js\n');
    const handle = await open(path.join(dir, 'huge.js'), 'w');
    await handle.truncate(1024 * 1024 * 1024);
    await handle.close();
    expect(await failure()).toBe('svc.yaml:4:11 reactors.r.code: cannot read huge.js: it is larger than 5 MB');
  });
});
