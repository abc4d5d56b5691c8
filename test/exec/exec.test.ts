/**
 * `svc exec -- CMD` (issue 31, item 4) as a real process: a fresh in-memory emulator with svc.yaml
 * applied, the command run with its URL and keys in the environment, svc exiting with its code.
 */
import { readdir, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { execSvc } from '../helpers/process.js';
import { tempDir } from '../helpers/temp.js';

/** Node code the command runs: `fetch` against the emulator with the keys svc exec gave it. */
const node = (code: string) => ['--', process.execPath, '-e', code];

const SVC_YAML = `applications:
  my-backend:
    type: private
    permissions: [token:use]
reactors:
  hello:
    code: reactors/hello.js
    application: my-backend
`;

describe('svc exec', () => {
  test('the command calls the emulator with the keys it was given; svc exits with its code', async () => {
    const cwd = await tempDir();
    const code = `
      const base = process.env.SVC_BASE_URL;
      const get = (path, key) => fetch(base + path, { headers: { 'svc-api-key': key } });
      (async () => {
        const management = await (await get('/applications/key', process.env.SVC_MANAGEMENT_KEY)).json();
        const api = await get('/tokens', process.env.SVC_API_KEY);
        const wrong = await get('/tokens', 'not-a-key-of-this-emulator');
        console.log(JSON.stringify({ base, management: management.type, api: api.status, wrong: wrong.status }));
        process.exit(3);
      })();`;
    const result = await execSvc(['exec', ...node(code)], { cwd });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(3);
    const seen = JSON.parse(result.stdout);
    expect(seen.base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(seen).toMatchObject({ management: 'management', api: 200, wrong: 401 });
    // In memory: nothing written in the folder.
    expect(await readdir(cwd)).toEqual([]);
  });

  test("svc.yaml is applied first: the command invokes its reactor with its Application's own key", async () => {
    const cwd = await tempDir();
    await mkdir(path.join(cwd, 'reactors'));
    await writeFile(
      path.join(cwd, 'reactors', 'hello.js'),
      'module.exports = async (req) => ({ raw: { hi: req.args.who } });\n',
    );
    await writeFile(path.join(cwd, 'svc.yaml'), SVC_YAML);
    const code = `
      const base = process.env.SVC_BASE_URL;
      (async () => {
        const list = await fetch(base + '/reactors', { headers: { 'svc-api-key': process.env.SVC_MANAGEMENT_KEY } }).then((r) => r.json());
        const hello = list.data.find((each) => each.name === 'hello');
        const answer = await fetch(base + '/reactors/' + hello.id + '/react', {
          method: 'POST',
          headers: { 'svc-api-key': process.env.SVC_KEY_MY_BACKEND, 'content-type': 'application/json' },
          body: JSON.stringify({ args: { who: 'exec' } }),
        });
        console.log(answer.status, JSON.stringify(await answer.json()));
        process.exit(answer.status === 200 ? 0 : 1);
      })();`;
    const result = await execSvc(['exec', '--config', 'svc.yaml', ...node(code)], { cwd });
    expect(result.stdout).toBe('200 {"raw":{"hi":"exec"}}');
    expect(result.code).toBe(0);
    // No state or keys file: the emulator was new and is gone.
    expect(await readdir(cwd)).toEqual(['reactors', 'svc.yaml']);
  });

  test('a command that is not found: one line, exit 127', async () => {
    const cwd = await tempDir();
    const result = await execSvc(['exec', '--', 'svc-no-such-command-anywhere', '--flag'], { cwd });
    expect(result.code).toBe(127);
    expect(result.stderr.trim().split('\n')).toEqual(['Error: svc-no-such-command-anywhere: command not found.']);
  });

  test('no -- or no command: the usage line, exit 2', async () => {
    const cwd = await tempDir();
    for (const args of [['exec'], ['exec', '--'], ['exec', 'node', '-e', '1']]) {
      const result = await execSvc(args, { cwd });
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split('\n')).toEqual([
        'Error: svc exec runs the command after --: svc exec [--config svc.yaml] [--port N] -- COMMAND [ARGS...]',
      ]);
    }
  });

  test('a bad svc.yaml: one line naming the problem, exit 1, and the command never runs', async () => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'svc.yaml'), 'reactors:\n  hello:\n    code: reactors/missing.js\n');
    const result = await execSvc(['exec', ...node('require("fs").writeFileSync("ran", "")')], { cwd });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('missing.js');
    expect(await readdir(cwd)).toEqual(['svc.yaml']);
  });

  test('two Application names that make one variable are an error', async () => {
    const cwd = await tempDir();
    const apps = (name: string) => `  ${name}:\n    type: private\n    permissions: [token:use]\n`;
    await writeFile(path.join(cwd, 'svc.yaml'), `applications:\n${apps('my-app')}${apps('my_app')}`);
    const result = await execSvc(['exec', ...node('1')], { cwd });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      'Error: The Applications my-app and my_app would both be given in SVC_KEY_MY_APP; rename one of them in svc.yaml.',
    );
  });

  test('a signal ends the command; svc exits 128+n', async () => {
    const cwd = await tempDir();
    const result = await execSvc(['exec', ...node('process.kill(process.pid, "SIGTERM")')], { cwd });
    expect(result.code).toBe(143);
  });
});
