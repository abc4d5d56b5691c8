import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, onTestFinished, test } from 'vitest';
import { parse } from 'yaml';
import { runSvc } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * npm as the project's machine runs it, with nothing of this machine's svc settings, and two
 * stand-ins: offline (a linked folder needs no registry; nothing leaves this machine), and no
 * install scripts, since svc's own `prepare` would rebuild this checkout's dist/ while other tests
 * run from it (a developer's `npm install` runs it, and the build it does is `npm run build`).
 */
function npmEnv(home: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    npm_config_offline: 'true',
    npm_config_ignore_scripts: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
}

function npm(args: string[], cwd: string) {
  return spawnSync('npm', args, { cwd, encoding: 'utf8', env: npmEnv(cwd) });
}

interface WorkflowStep {
  name?: string;
  run?: string;
  env?: Record<string, string>;
}

interface Workflow {
  jobs: { test: { env?: Record<string, string>; steps: WorkflowStep[] } };
}

/** Runs one `run:` block as GitHub Actions does (bash -e), in a process group of its own. */
function runStep(script: string, cwd: string, env: Record<string, string>) {
  const child = spawn('bash', ['--noprofile', '--norc', '-e', '-o', 'pipefail', '-c', script], {
    cwd,
    env,
    detached: true,
  });
  // Anything a step left running stays in that group: stopped with it at the end.
  onTestFinished(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise<{ code: number | null; output: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, output })),
  );
}

describe('a project made by svc init, end to end', () => {
  test('locally: npm install links svc from this checkout, and the npm test passes with nothing started first', {
    timeout: 180_000,
  }, async () => {
    const dir = await tempDir();
    expect((await runSvc('init . --template full --yes', { cwd: dir })).code).toBe(0);
    const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'));
    expect(pkg.devDependencies).toEqual({ svc: `file:${ROOT.replace(/\/$/, '')}` });

    const installed = npm(['install'], dir);
    expect(installed.status, `${installed.stdout}\n${installed.stderr}`).toBe(0);
    expect(await realpath(path.join(dir, 'node_modules', 'svc'))).toBe(await realpath(ROOT));

    // No svc serve, no SVC_* variable, no credentials file: the tests run the emulator themselves.
    const tested = npm(['test'], dir);
    expect(tested.status, `${tested.stdout}\n${tested.stderr}`).toBe(0);
    expect(tested.stdout).toMatch(/# pass 4\n/);
    expect(tested.stdout).toMatch(/# fail 0\n/);
    expect(existsSync(path.join(dir, '.svc'))).toBe(false);
  });

  test("in CI: the workflow's own steps (svc from SVC_PACKAGE in package.json's place, npm test) pass", {
    timeout: 180_000,
  }, async () => {
    const dir = await tempDir();
    expect((await runSvc('init . --template full --yes', { cwd: dir })).code).toBe(0);
    // As committed from a developer's machine: devDependencies.svc names a folder this runner lacks.
    const pkgFile = path.join(dir, 'package.json');
    const pkg = JSON.parse(await readFile(pkgFile, 'utf8'));
    await writeFile(pkgFile, JSON.stringify({ ...pkg, devDependencies: { svc: 'file:/home/dev/svc' } }, null, 2));

    const workflow = parse(await readFile(path.join(dir, '.github/workflows/svc.yml'), 'utf8')) as Workflow;
    const { env: jobEnv = {}, steps } = workflow.jobs.test;
    const run = steps.filter((step) => step.run !== undefined);
    expect(run.map((step) => step.name)).toEqual(['Install svc', 'Test']);
    // The tests start their own emulator: the workflow starts none and holds no keys.
    expect(JSON.stringify(workflow)).not.toMatch(/svc serve|SVC_[A-Z_]*KEY/);

    const runner = await tempDir('svc-runner-');
    const env = (svcPackage: string) => ({
      ...npmEnv(dir),
      CI: 'true',
      RUNNER_TEMP: runner,
      ...jobEnv,
      // What `${{ vars.SVC_PACKAGE }}` gives the step: this checkout, as a folder.
      SVC_PACKAGE: svcPackage,
    });

    const unset = await runStep(run[0]!.run!, dir, env(''));
    expect(unset.code).toBe(1);
    expect(unset.output).toContain('::error::Set the repository variable SVC_PACKAGE');

    for (const step of run) {
      const { code, output } = await runStep(step.run!, dir, env(ROOT));
      expect(code, `step "${step.name}":\n${output}`).toBe(0);
      if (step.name === 'Test') {
        expect(output).toMatch(/# pass 4\n/);
        expect(output).toMatch(/# fail 0\n/);
      }
    }
    expect(JSON.parse(await readFile(pkgFile, 'utf8')).devDependencies.svc).toBe(ROOT);
    expect(await realpath(path.join(dir, 'node_modules', 'svc'))).toBe(await realpath(ROOT));
  });
});
