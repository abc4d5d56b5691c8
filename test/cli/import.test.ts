import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { runSvc } from '../helpers/cli.js';
import { startEmulator } from '../helpers/emulator.js';

const SCHEMA = path.resolve(import.meta.dirname, '../../templates/svc.schema.json');
const CODE = 'module.exports = async () => ({ raw: { ok: true } });\n';

describe('svc import beside svc serve (issue 31)', () => {
  test('a schema copy beside svc.yaml, a .gitignore added to, and the bootstrap Applications left alone by --prune', async () => {
    const emu = await startEmulator();
    const cwd = emu.dir;
    const created = await emu.call('POST', '/reactors', {
      body: { name: 'echo', code: CODE, configuration: { A: '1' } },
    });
    expect(created.status, created.text).toBe(201);
    await writeFile(path.join(cwd, '.gitignore'), 'node_modules/\n.svc/');

    const imported = await runSvc('import', { cwd });
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('Imported 0 Applications, 1 reactor and 0 proxies into svc.yaml.');
    expect(imported.stderr).toContain(
      'Warning: applications.svc management is not imported: it is the Application whose key svc is using.',
    );
    expect(imported.stderr).toContain('Warning: applications.svc private is not imported: svc serve made it');

    const yaml = await readFile(path.join(cwd, 'svc.yaml'), 'utf8');
    expect(yaml.split('\n')[0]).toBe('# yaml-language-server: $schema=./svc.schema.json');
    expect(yaml).not.toContain('svc private');
    expect(await readFile(path.join(cwd, 'svc.schema.json'), 'utf8')).toBe(await readFile(SCHEMA, 'utf8'));
    const ignore = await readFile(path.join(cwd, '.gitignore'), 'utf8');
    expect(ignore.startsWith('node_modules/\n.svc/\n# svc:')).toBe(true);
    expect(ignore.split('\n').filter((line) => line === '.svc/')).toHaveLength(1);
    expect(ignore.endsWith('\n*.env\n')).toBe(true);

    // Again: nothing added twice.
    expect((await runSvc('import --force', { cwd })).code).toBe(0);
    expect(await readFile(path.join(cwd, '.gitignore'), 'utf8')).toBe(ignore);

    // svc.yaml emptied: --prune deletes the reactor it imported, never svc serve's Applications.
    await writeFile(path.join(cwd, 'svc.yaml'), '# yaml-language-server: $schema=./svc.schema.json\n{}\n');
    const pruned = await runSvc('apply --prune --yes', { cwd });
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toContain('reactors.echo');
    expect(pruned.stdout).not.toContain('svc private');
    expect((await emu.call('GET', '/reactors')).body.data).toEqual([]);
    const names = (await emu.call('GET', '/applications')).body.data.map((app: { name: string }) => app.name);
    expect(names.sort()).toEqual(['svc management', 'svc private']);
    // The private key of .svc/credentials.json still works.
    expect((await emu.call('GET', '/tokens', { key: emu.privateKey })).status).toBe(200);
  });

  test('a new folder gets a .gitignore of its own', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = path.join(emu.dir, 'infra');
    const keys = ['--base-url', emu.url, '--management-key', emu.managementKey];
    const imported = await runSvc(['import', '--out', 'infra/svc.yaml', ...keys], { cwd: emu.dir });
    expect(imported.code, imported.stderr).toBe(0);
    expect(await readFile(path.join(cwd, '.gitignore'), 'utf8')).toMatch(/^# svc: .*\n\.svc\/\n\*\.env\n$/);
    expect(await readFile(path.join(cwd, 'svc.schema.json'), 'utf8')).toBe(await readFile(SCHEMA, 'utf8'));
  });
});
