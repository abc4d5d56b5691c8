import { spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The code blocks of the README's "Testing with svc/testing" section, by the file their first line names. */
async function readmeExamples(): Promise<Map<string, string>> {
  const readme = await readFile(path.join(root, 'README.md'), 'utf8');
  const start = readme.indexOf('## Testing with svc/testing');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const blocks = new Map<string, string>();
  for (const match of section.matchAll(/```(?:ts|js)\n([\s\S]*?)```/g)) {
    const code = match[1]!;
    const file = /^\/\/ (test\/\S+)/.exec(code)?.[1];
    if (file) blocks.set(file, code);
  }
  return blocks;
}

function run(command: string, args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, NO_COLOR: '1' } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe("the README's svc/testing examples, as written, in a project of `svc init`'s reactor template", () => {
  let project: string;
  let examples: Map<string, string>;

  beforeAll(async () => {
    examples = await readmeExamples();
    project = await mkdtemp(path.join(os.tmpdir(), 'svc-readme-'));
    await cp(path.join(root, 'templates/init/reactor/svc.yaml'), path.join(project, 'svc.yaml'));
    await cp(path.join(root, 'templates/init/reactor/reactors'), path.join(project, 'reactors'), { recursive: true });
    await writeFile(path.join(project, 'package.json'), '{ "name": "example", "private": true }\n');
    await mkdir(path.join(project, 'node_modules'));
    // The package as a project installs it, and the runner it uses.
    await symlink(root, path.join(project, 'node_modules', 'svc'), 'dir');
    await symlink(path.join(root, 'node_modules', 'vitest'), path.join(project, 'node_modules', 'vitest'), 'dir');
    await mkdir(path.join(project, 'test'));
    for (const [file, code] of examples) await writeFile(path.join(project, file), code);
  });

  afterAll(async () => {
    if (project) await rm(project, { recursive: true, force: true });
  });

  it('has a vitest, a node:test and a jest example', () => {
    expect([...examples.keys()].sort()).toEqual([
      'test/charge.jest.test.mjs',
      'test/charge.test.mjs',
      'test/charge.test.ts',
    ]);
  });

  it('runs the node:test example', async () => {
    const { code, output } = await run(
      process.execPath,
      ['--test', '--test-reporter=tap', 'test/charge.test.mjs'],
      project,
    );
    expect(output).toMatch(/# pass 1/);
    expect(code).toBe(0);
  }, 60_000);

  it('runs the vitest example', async () => {
    const vitest = path.join(root, 'node_modules', 'vitest', 'vitest.mjs');
    const { code, output } = await run(process.execPath, [vitest, 'run', 'test/charge.test.ts'], project);
    expect(output).toMatch(/1 passed/);
    expect(code).toBe(0);
  }, 90_000);

  // jest is not a dependency of svc: its example runs under vitest's jest-compatible globals
  // (beforeAll, afterAll, test, expect), which is all of jest it uses.
  it('runs the jest example', async () => {
    const vitest = path.join(root, 'node_modules', 'vitest', 'vitest.mjs');
    const { code, output } = await run(
      process.execPath,
      [vitest, 'run', '--globals', 'test/charge.jest.test.mjs'],
      project,
    );
    expect(output).toMatch(/1 passed/);
    expect(code).toBe(0);
  }, 90_000);
});
