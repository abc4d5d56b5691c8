import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { runSvc } from '../../src/cli/main.js';
import { http } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/wait.js';

const SECRET = 'sk_live_never_in_a_log_line';
const code = (answer: string) => `module.exports = async () => ({ raw: { answer: '${answer}' } });\n`;
const SVC_YAML = `applications:
  backend:
    type: private
    permissions: [token:use]
reactors:
  hello:
    code: reactors/hello.js
    application: backend
    configuration:
      SECRET: \${env:SECRET}
`;

/** `svc serve` in-process, its stdout readable while it runs; `stop()` is Ctrl-C and resolves to the exit code. */
function serve(cwd: string, args: string[] = []) {
  const controller = new AbortController();
  let stdout = '';
  let stderr = '';
  const running = runSvc(['serve', '--port', '0', '--log-format', 'json', ...args], {
    stdout: { write: (chunk: string) => (stdout += chunk), isTTY: false, columns: 120 },
    stderr: { write: (chunk: string) => (stderr += chunk) },
    stdin: Readable.from([]) as never,
    env: { HOME: cwd, XDG_CONFIG_HOME: `${cwd}/.config`, SECRET },
    cwd,
    signal: controller.signal,
  });
  const lines = () =>
    stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    lines,
    output: () => stdout + stderr,
    stop: async () => {
      controller.abort('SIGINT');
      return running;
    },
  };
}

async function project(
  files: Record<string, string>,
): Promise<{ cwd: string; write: (file: string, text: string) => Promise<void> }> {
  const cwd = await tempDir();
  const write = async (file: string, text: string) => {
    await mkdir(path.dirname(path.join(cwd, file)), { recursive: true });
    await writeFile(path.join(cwd, file), text);
  };
  for (const [file, text] of Object.entries(files)) await write(file, text);
  return { cwd, write };
}

/** The reactor `name` as the running serve holds it, invoked with the bootstrap private key. */
async function invoker(cwd: string, name: string) {
  const credentials = await eventually(async () => {
    const saved = JSON.parse(await readFile(path.join(cwd, '.svc', 'credentials.json'), 'utf8'));
    expect(saved.private_key).toBeDefined();
    return saved as { url: string; management_key: string; private_key: string };
  }, 10_000);
  const reactor = await eventually(async () => {
    const list = await http(`${credentials.url}/reactors`, 'GET', { key: credentials.management_key });
    const found = (list.body.data as { id: string; name: string }[]).find((each) => each.name === name);
    expect(found).toBeDefined();
    return found!;
  }, 10_000);
  return async () =>
    (
      await http(`${credentials.url}/reactors/${reactor.id}/react`, 'POST', {
        key: credentials.private_key,
        body: { args: {} },
      })
    ).body;
}

describe('svc serve --config: svc.yaml applied at start and on each save', () => {
  test('a saved reactor answers with its new code; a broken save keeps the old one and says where it broke', async () => {
    const { cwd, write } = await project({ 'svc.yaml': SVC_YAML, 'reactors/hello.js': code('one') });
    const served = serve(cwd);
    try {
      const invoke = await invoker(cwd, 'hello');
      await eventually(async () => expect(await invoke()).toEqual({ raw: { answer: 'one' } }), 10_000);
      // The reactor can answer before the apply has finished (state written) and said so.
      await eventually(
        () =>
          expect(served.lines()).toContainEqual(
            expect.objectContaining({ event: 'reload', target: 'reactors.hello created', ok: true }),
          ),
        10_000,
      );

      await write('reactors/hello.js', code('two'));
      await eventually(async () => expect(await invoke()).toEqual({ raw: { answer: 'two' } }), 10_000);
      const reload = await eventually(() => {
        const line = served.lines().find((each) => each.event === 'reload' && each.target === 'reactors.hello updated');
        expect(line).toBeDefined();
        return line!;
      });
      expect(reload).toMatchObject({ ok: true, file: 'svc.yaml', ms: expect.any(Number) });

      await write('svc.yaml', `${SVC_YAML}proxies:\n  broken: [\n`);
      // writeFile empties the file before it writes it: on a busy machine the watcher may read it
      // empty first, a refusal of its own ("svc.yaml is empty"); the broken text's says where it broke.
      const refused = await eventually(() => {
        const failed = served.lines().filter((each) => each.event === 'reload' && each.ok === false);
        const line = failed.find((each) => !String(each.error).includes('is empty'));
        expect(line, JSON.stringify(failed)).toBeDefined();
        return line!;
      }, 10_000);
      expect(String(refused.error)).toMatch(/svc\.yaml:\d+(:\d+)?/);
      expect(await invoke()).toEqual({ raw: { answer: 'two' } });
    } finally {
      expect(await served.stop()).toBe(0);
    }
    expect(served.output()).not.toContain(SECRET);
  });

  test('--no-watch applies at start only; without svc.yaml serve serves as before', async () => {
    const { cwd, write } = await project({ 'svc.yaml': SVC_YAML, 'reactors/hello.js': code('one') });
    const served = serve(cwd, ['--no-watch']);
    try {
      const invoke = await invoker(cwd, 'hello');
      expect(await invoke()).toEqual({ raw: { answer: 'one' } });
      await write('reactors/hello.js', code('two'));
      // A later save that would have been applied by now (were it watched) is not: the reactor's
      // code is read back over the API, the path a watch would have changed.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await invoke()).toEqual({ raw: { answer: 'one' } });
    } finally {
      expect(await served.stop()).toBe(0);
    }

    const bare = await project({});
    const plain = serve(bare.cwd);
    await eventually(() => expect(plain.lines().map((line) => line.event)).toContain('ready'), 10_000);
    expect(await plain.stop()).toBe(0);
    expect(plain.lines().filter((line) => line.event === 'reload')).toEqual([]);
  });

  test("a runtime error's place is said in the user's file (its folder kept), not in the server's name for it", async () => {
    const failing = "module.exports = async () => {\n  throw new Error('broke here');\n};\n";
    const { cwd } = await project({
      'svc.yaml': SVC_YAML.replace('reactors/hello.js', 'code/bad.js'),
      'code/bad.js': failing,
    });
    const served = serve(cwd);
    try {
      const invoke = await invoker(cwd, 'hello');
      // The start's apply is over (a stop before that would be an interruption, exit 130).
      await eventually(
        () => expect(served.lines()).toContainEqual(expect.objectContaining({ event: 'reload', ok: true })),
        10_000,
      );
      await invoke();
      const failed = await eventually(() => {
        const line = served.lines().find((each) => each.event === 'invocation' && each.status === 500);
        expect(line).toBeDefined();
        return line!;
      }, 10_000);
      expect(String(failed.stack)).toContain(`(${path.join('code', 'bad.js')}:2:9)`);
      expect(String(failed.stack)).not.toContain('hello.js');
    } finally {
      expect(await served.stop()).toBe(0);
    }
  });

  test('--config naming a file that does not exist is a one-line error', async () => {
    const { cwd } = await project({});
    const served = serve(cwd, ['--config', 'nope.yaml']);
    expect(await served.stop()).toBe(2);
    expect(served.output()).toMatch(/^Error: --config names nope\.yaml, which does not exist\./);
  });
});
