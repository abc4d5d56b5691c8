import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, onTestFinished, test } from 'vitest';
import { parse } from 'yaml';
import { runSvc } from '../helpers/cli.js';
import { execSvc, spawnSvc, SVC_BIN } from '../helpers/process.js';
import { tempDir } from '../helpers/temp.js';

/** Runs the generated project's `npm test` with nothing of this machine's svc settings. */
function npmTest(cwd: string, env: Record<string, string> = {}) {
  return spawnSync('npm', ['test'], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: cwd, ...env },
  });
}

interface WorkflowStep {
  name?: string;
  run?: string;
}

interface Workflow {
  jobs: { test: { env: Record<string, string>; steps: WorkflowStep[] } };
}

/** Runs one `run:` block as GitHub Actions does (bash -e), in a process group of its own. */
function runStep(script: string, cwd: string, env: Record<string, string>) {
  const child = spawn('bash', ['--noprofile', '--norc', '-e', '-o', 'pipefail', '-c', script], {
    cwd,
    env,
    detached: true,
  });
  // The emulator a step starts in the background stays in that group: stopped with it at the end.
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
  test('locally: svc serve (a process) in the project, svc apply, and its own npm test passes', {
    timeout: 60_000,
  }, async () => {
    const dir = await tempDir();
    expect((await runSvc('init . --template full --yes', { cwd: dir })).code).toBe(0);
    const serve = spawnSvc(['serve', '--port', '0', '--log-format', 'json'], { cwd: dir });
    await serve.waitForLine((line) => line.includes('"event":"ready"'), 30_000);
    const applied = await execSvc(['apply'], { cwd: dir });
    expect(applied.code, applied.stderr).toBe(0);
    // No SVC_* variable: the test finds the emulator and its keys in .svc/credentials.json.
    const tested = npmTest(dir);
    expect(tested.status, `${tested.stdout}\n${tested.stderr}`).toBe(0);
    expect(tested.stdout).toMatch(/# pass 4\n/);
    expect(tested.stdout).toMatch(/# fail 0\n/);
  });

  test("in CI: the workflow's own steps (serve --port 0 in the background, /health, apply, npm test) pass", {
    timeout: 60_000,
  }, async () => {
    const dir = await tempDir();
    expect((await runSvc('init . --template reactor --yes', { cwd: dir })).code).toBe(0);
    const workflow = parse(await readFile(path.join(dir, '.github/workflows/svc.yml'), 'utf8')) as Workflow;
    const { env: jobEnv, steps } = workflow.jobs.test;
    const names = steps.map((step) => step.name);
    expect(names).toEqual(expect.arrayContaining(['Install svc', 'Start the emulator', 'Apply svc.yaml', 'Test']));

    // svc is installed here (a shim on PATH) rather than by the step that installs it from SVC_PACKAGE.
    const runner = await tempDir('svc-runner-');
    await mkdir(path.join(runner, 'bin'));
    await writeFile(path.join(runner, 'bin', 'svc'), `#!/bin/sh\nexec "${process.execPath}" "${SVC_BIN}" "$@"\n`);
    await chmod(path.join(runner, 'bin', 'svc'), 0o755);
    const githubEnv = path.join(runner, 'github-env');
    await writeFile(githubEnv, '');
    const env: Record<string, string> = {
      PATH: `${path.join(runner, 'bin')}:${process.env.PATH ?? ''}`,
      HOME: dir,
      CI: 'true',
      RUNNER_TEMP: runner,
      GITHUB_ENV: githubEnv,
      ...jobEnv,
    };
    for (const step of steps) {
      if (step.run === undefined || step.name === 'Install svc') continue;
      // Variables a step wrote to $GITHUB_ENV are set for the steps after it.
      for (const line of (await readFile(githubEnv, 'utf8')).split('\n')) {
        const at = line.indexOf('=');
        if (at > 0) env[line.slice(0, at)] = line.slice(at + 1);
      }
      const { code, output } = await runStep(step.run, dir, env);
      expect(code, `step "${step.name}":\n${output}`).toBe(0);
      if (step.name === 'Test') expect(output).toMatch(/# pass 2\n/);
    }
    expect(env.SVC_BASE_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // The emulator ran in memory with the workflow's keys: no credentials file stood in for them.
    expect(existsSync(path.join(dir, '.svc', 'credentials.json'))).toBe(false);
  });
});
