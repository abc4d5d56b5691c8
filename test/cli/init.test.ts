import { spawn, spawnSync } from 'node:child_process';
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/apply/index.js';
import { schemaValidator } from '../../src/apply/schema.js';
import { runSvc as run } from '../../src/cli/main.js';
import { TEMPLATES, templateFiles, type TemplateName } from '../../src/cli/scaffold.js';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { startEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every file under `dir`, relative, sorted. */
async function tree(dir: string, prefix = ''): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(path.join(dir, prefix), { withFileTypes: true })) {
    const relative = path.posix.join(prefix, entry.name);
    if (entry.isDirectory()) found.push(...(await tree(dir, relative)));
    else found.push(relative);
  }
  return found.sort();
}

/**
 * Runs svc in-process with a stdin that is a terminal or not and that never ends unless given
 * lines: a command that read it when it must not would hang (and the test time out).
 */
async function runWithStdin(argv: string[], options: { cwd: string; tty: boolean; lines?: string[] }) {
  let stdout = '';
  let stderr = '';
  const stdin = options.lines ? Readable.from(options.lines) : new PassThrough();
  Object.assign(stdin, { isTTY: options.tty });
  const code = await run(argv, {
    stdout: { write: (chunk: string) => (stdout += chunk), isTTY: options.tty },
    stderr: { write: (chunk: string) => (stderr += chunk), isTTY: options.tty },
    stdin,
    env: { HOME: options.cwd },
    cwd: options.cwd,
    signal: new AbortController().signal,
  });
  return { code, stdout, stderr };
}

const EXPECTED: Record<TemplateName, string[]> = {
  reactor: ['reactors/charge.js', 'test/charge.test.js'],
  proxy: ['destination.js', 'test/transforms.test.js', 'transforms/request.js', 'transforms/response.js'],
  full: [
    'destination.js',
    'reactors/charge.js',
    'test/charge.test.js',
    'test/transforms.test.js',
    'transforms/request.js',
    'transforms/response.js',
  ],
};
const COMMON = ['.github/workflows/svc.yml', '.gitignore', 'README.md', 'package.json', 'svc.schema.json', 'svc.yaml'];

describe('svc init', () => {
  test.each(TEMPLATES)(
    '--template %s --yes writes a project whose svc.yaml names files that exist',
    async (template) => {
      const cwd = await tempDir();
      const result = await runSvc(['init', 'shop', '--template', template, '--yes'], { cwd });
      expect(result.code, result.stderr).toBe(0);
      const dir = path.join(cwd, 'shop');
      expect(await tree(dir)).toEqual([...COMMON, ...EXPECTED[template]].sort());
      expect(result.stdout).toContain(`Created a ${template} project in shop:`);
      expect(result.stdout).toContain('cd shop');

      const yaml = await readFile(path.join(dir, 'svc.yaml'), 'utf8');
      expect(yaml.split('\n')[0]).toBe('# yaml-language-server: $schema=./svc.schema.json');
      const named = [...yaml.matchAll(/^\s+(?:code|request_transform|response_transform): (\S+)$/gm)].map(
        (match) => match[1]!,
      );
      expect(named.length).toBeGreaterThan(0);
      for (const file of named) expect((await stat(path.join(dir, file))).isFile()).toBe(true);
      expect(yaml.includes('reactors:')).toBe(template !== 'proxy');
      expect(yaml.includes('proxies:')).toBe(template !== 'reactor');

      expect(JSON.parse(await readFile(path.join(dir, 'svc.schema.json'), 'utf8'))).toEqual(
        JSON.parse(await readFile(path.join(ROOT, 'templates', 'svc.schema.json'), 'utf8')),
      );
      const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'));
      expect(pkg).toMatchObject({ name: 'shop', private: true, scripts: { test: 'node --test' } });
      expect(pkg.dependencies).toBeUndefined();
      // The tests import svc/testing: svc comes from the package that ran svc init.
      expect(pkg.devDependencies).toEqual({ svc: `file:${ROOT.replace(/\/$/, '')}` });
      expect((await readFile(path.join(dir, '.gitignore'), 'utf8')).split('\n')).toContain('.svc/');
      const workflow = await readFile(path.join(dir, '.github/workflows/svc.yml'), 'utf8');
      for (const step of ['npm pkg set devDependencies.svc="$SVC_PACKAGE"', 'npm install', 'npm test'])
        expect(workflow).toContain(step);
      // The tests start the emulator themselves: CI starts none.
      expect(workflow).not.toContain('svc serve');
      for (const test of EXPECTED[template].filter((file) => file.startsWith('test/'))) {
        const code = await readFile(path.join(dir, test), 'utf8');
        expect(code).toContain("await import('svc/testing')");
        expect(code).toContain('startSvc(');
      }
      expect(await readFile(path.join(dir, 'README.md'), 'utf8')).toMatch(/^# shop\n/);
    },
  );

  test.each(TEMPLATES)(
    'the %s svc.yaml validates against the schema and loads as svc apply loads it',
    async (template) => {
      const dir = await tempDir();
      expect((await runSvc(['init', '.', '--template', template, '--yes'], { cwd: dir })).code).toBe(0);
      const validate = schemaValidator();
      const valid = validate(parse(await readFile(path.join(dir, 'svc.yaml'), 'utf8')));
      expect(validate.errors ?? [], JSON.stringify(validate.errors)).toEqual([]);
      expect(valid).toBe(true);
      const desired = await loadConfig('svc.yaml', { cwd: dir, env: {} });
      expect(desired.applications.map((application) => application.name)).toEqual(['backend']);
      expect(desired.reactors.map((reactor) => reactor.name)).toEqual(template === 'proxy' ? [] : ['charge']);
      expect(desired.proxies.map((proxy) => proxy.name)).toEqual(template === 'reactor' ? [] : ['payments']);
    },
  );

  test('the generated tests need svc installed, and without it say so in one line with the fix', async () => {
    const cwd = await tempDir();
    expect((await runSvc('init . --template full --yes', { cwd })).code).toBe(0);
    const child = spawnSync('npm', ['test', '--silent'], {
      cwd,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: cwd },
    });
    expect(child.status).not.toBe(0);
    const said = child.stdout.split('\n').filter((line) => line.includes('svc/testing not found'));
    expect(said.length).toBeGreaterThan(0);
    for (const line of said) {
      expect(line).toMatch(
        /svc\/testing not found: run `npm install` \(devDependencies\.svc says where svc comes from\)\./,
      );
    }
    expect(child.stdout).not.toMatch(/\n\s+at /); // no stack
  });

  test('the package.json of a project takes svc from where svc init was told (JSON-escaped)', async () => {
    const files = await templateFiles('reactor', 'shop', { svcPackage: 'file:C:\\svc "checkout"' });
    const pkg = JSON.parse(files.find((file) => file.path === 'package.json')!.content);
    expect(pkg.devDependencies).toEqual({ svc: 'file:C:\\svc "checkout"' });
  });

  test('--json prints one document: the folder, template, name and files', async () => {
    const cwd = await tempDir();
    const result = await runSvc('init app --json', { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toEqual({
      directory: path.join(cwd, 'app'),
      template: 'reactor',
      name: 'app',
      files: [...COMMON, ...EXPECTED.reactor].sort((a, b) => a.localeCompare(b)),
      replaced: [],
    });
  });

  test('without a terminal and without --yes it asks nothing and takes the defaults', async () => {
    const cwd = await tempDir();
    const result = await runWithStdin(['init', 'My Project!'], { cwd, tty: false });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    const dir = path.join(cwd, 'My Project!');
    expect(await tree(dir)).toEqual([...COMMON, ...EXPECTED.reactor].sort());
    expect(JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')).name).toBe('my-project');
  });

  test('at a terminal it asks for the template and the name, again after a wrong answer', async () => {
    const cwd = await tempDir();
    const result = await runWithStdin(['init', 'p'], {
      cwd,
      tty: true,
      lines: ['everything\nfull\n', 'Bad Name\n', 'pay-app\n'],
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('Template (reactor, proxy, full) [reactor]: ');
    expect(result.stderr).toContain('Pick one of reactor, proxy, full.');
    expect(result.stderr).toContain('Package name [p]: ');
    expect(result.stderr).toMatch(/A package name may hold lower-case letters/);
    const dir = path.join(cwd, 'p');
    expect(await tree(dir)).toEqual([...COMMON, ...EXPECTED.full].sort());
    expect(JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')).name).toBe('pay-app');
  });

  test('at a terminal, an empty answer takes the default; the flags given are not asked', async () => {
    const cwd = await tempDir();
    const result = await runWithStdin(['init', 'q', '--template', 'proxy'], { cwd, tty: true, lines: ['\n'] });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('Template');
    expect(JSON.parse(await readFile(path.join(cwd, 'q', 'package.json'), 'utf8')).name).toBe('q');
    expect(await tree(path.join(cwd, 'q'))).toContain('transforms/request.js');
  });

  test('--yes at a terminal asks nothing', async () => {
    const cwd = await tempDir();
    const result = await runWithStdin(['init', 'r', '--yes'], { cwd, tty: true });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
  });

  test('refuses to overwrite: one line naming the files, exit 1, nothing written; --force replaces', async () => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'svc.yaml'), 'mine\n');
    await writeFile(path.join(cwd, 'package.json'), '{"name":"mine"}\n');
    const refused = await runSvc('init --yes', { cwd });
    expectOneLineError(
      refused,
      1,
      `Error: Not overwriting what exists in ${cwd}: package.json, svc.yaml (pass --force to replace them).`,
    );
    expect(await tree(cwd)).toEqual(['package.json', 'svc.yaml']);
    expect(await readFile(path.join(cwd, 'svc.yaml'), 'utf8')).toBe('mine\n');

    const forced = await runSvc('init --yes --force', { cwd });
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain('(replaced 2 file(s))');
    expect(await readFile(path.join(cwd, 'svc.yaml'), 'utf8')).toContain('reactors:');
  });

  test('a file where a folder must go is a one-line error, before anything is written', async () => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'test'), 'a file\n');
    const result = await runSvc('init --yes --force', { cwd });
    expectOneLineError(
      result,
      1,
      `Error: Cannot write test/charge.test.js in ${cwd}: a file is in the way of its folder.`,
    );
    expect(await tree(cwd)).toEqual(['test']);
  });

  test('a folder where a file must go is a one-line error, even with --force', async () => {
    const cwd = await tempDir();
    await mkdir(path.join(cwd, 'svc.yaml'));
    expectOneLineError(
      await runSvc('init --yes --force', { cwd }),
      1,
      `Error: Cannot write svc.yaml in ${cwd}: a folder of that name is in the way.`,
    );
  });

  test('a --name that is no package name, or an unknown template, is a usage error (exit 2)', async () => {
    const cwd = await tempDir();
    expectOneLineError(
      await runSvc(['init', '--name', 'Not Valid', '--yes'], { cwd }),
      2,
      /--name "Not Valid" is not a package name/,
    );
    const unknown = await runSvc('init --template everything --yes', { cwd });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/everything.*reactor, proxy, full/);
    expect(await tree(cwd)).toEqual([]);
  });

  test('every template file is in the package (npm pack), the dotfiles under their _ names', () => {
    const packed = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(packed.status, packed.stderr).toBe(0);
    const files = (JSON.parse(packed.stdout) as { files: { path: string }[] }[])[0]!.files.map((file) => file.path);
    for (const file of [
      'templates/svc.schema.json',
      'templates/init/common/_gitignore',
      'templates/init/common/_github/workflows/svc.yml',
    ]) {
      expect(files).toContain(file);
    }
  });
});

describe('the inner loop svc init sets up (issue 31)', () => {
  test.each(TEMPLATES)(
    '%s: next steps and README run svc serve alone, never svc apply --watch beside it',
    async (template) => {
      const cwd = await tempDir();
      const result = await runSvc(['init', '.', '--template', template, '--yes'], { cwd });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('svc serve ');
      const readme = await readFile(path.join(cwd, 'README.md'), 'utf8');
      for (const text of [result.stdout, readme]) expect(text).not.toMatch(/^\s*svc apply --watch/m);
    },
  );

  test.each(['proxy', 'full'] as const)(
    '%s: the proxy forwards to destination.js on this machine, and a call through it answers offline',
    async (template) => {
      const cwd = await tempDir();
      const result = await runSvc(['init', '.', '--template', template, '--yes'], { cwd });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('node destination.js');
      const yaml = await readFile(path.join(cwd, 'svc.yaml'), 'utf8');
      const destination = /destination_url: (\S+)/.exec(yaml)?.[1];
      expect(destination).toBe('http://127.0.0.1:8791/anything');

      // destination.js as a user starts it (on a free port here), then svc.yaml applied against it.
      const child = spawn(process.execPath, ['destination.js'], { cwd, env: { PATH: process.env.PATH, PORT: '0' } });
      try {
        const port = await new Promise<string>((resolve, reject) => {
          let out = '';
          child.stdout.on('data', (chunk: Buffer) => {
            out += chunk.toString();
            const found = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
            if (found) resolve(found[1]!);
          });
          child.on('exit', (code) => reject(new Error(`destination.js exited (${code}): ${out}`)));
        });
        await writeFile(path.join(cwd, 'svc.yaml'), yaml.replace(':8791/', `:${port}/`));
        const emu = await startEmulator({ dir: cwd });
        const applied = await runSvc('apply', { cwd });
        expect(applied.code, applied.stderr).toBe(0);
        const invoked = await runSvc(
          ['invoke', 'proxy', 'payments', '-X', 'POST', '-d', '{"amount": 1250}', '--json'],
          {
            cwd,
          },
        );
        expect(invoked.code, invoked.stderr).toBe(0);
        expect(JSON.stringify(invoked.json())).toContain('"received":["data","headers","json","method","url"]');
        await emu.dispose();
      } finally {
        child.kill();
      }
    },
  );
});
