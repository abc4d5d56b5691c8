import { spawn, spawnSync } from 'node:child_process';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runSvc } from '../helpers/cli.js';
import { startEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pytest = spawnSync('python3', ['-m', 'pytest', '--version'], { encoding: 'utf8' });
const skipped = pytest.status === 0 ? false : 'python3 with pytest is not installed here';

/** The README's pytest example: the python block of "A tenant per test in any language". */
async function pytestExample(): Promise<string> {
  const readme = await readFile(path.join(root, 'README.md'), 'utf8');
  const start = readme.indexOf('### A tenant per test in any language');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const code = /```python\n([\s\S]*?)```/.exec(section)?.[1];
  if (!code?.startsWith('# tests/test_charge.py')) throw new Error('no pytest example in the README');
  return code;
}

function run(command: string, args: string[], cwd: string, env: Record<string, string>) {
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe("the README's pytest example, as written, against svc.yaml of `svc init`'s reactor template", () => {
  it.skipIf(skipped)(
    `forks a tenant per test over HTTP and deletes it (${skipped || pytest.stdout.trim()})`,
    async () => {
      const managementKey = 'local-management-key-01';
      const emu = await startEmulator({ inMemory: true, managementKey });
      const project = await tempDir();
      await cp(path.join(root, 'templates/init/reactor/svc.yaml'), path.join(project, 'svc.yaml'));
      await cp(path.join(root, 'templates/init/reactor/reactors'), path.join(project, 'reactors'), { recursive: true });
      // What `svc serve --config svc.yaml` does at its start: svc.yaml applied to the bootstrapped tenant.
      const applied = await runSvc(['apply', '--base-url', emu.url, '--management-key', managementKey], {
        cwd: project,
      });
      expect(applied.code, applied.stderr).toBe(0);
      await mkdir(path.join(project, 'tests'));
      await writeFile(path.join(project, 'tests', 'test_charge.py'), await pytestExample());
      const { code, output } = await run(
        'python3',
        ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests/test_charge.py'],
        project,
        { SVC_URL: emu.url, SVC_MANAGEMENT_KEY: managementKey },
      );
      expect(output).toMatch(/2 passed/);
      expect(code).toBe(0);
      // Each test's fork was deleted after it: only the bootstrapped tenant is left.
      const tenants = (await emu.call('GET', '/_emulator/tenants', { key: null })).body.data;
      expect(tenants.map((tenant: { id: string }) => tenant.id)).toEqual([emu.tenantId]);
    },
    60_000,
  );
});
