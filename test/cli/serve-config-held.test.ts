import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, onTestFinished, test } from 'vitest';
import type { EmulatorEventInit } from '../../src/api/events.js';
import { runSvc } from '../../src/cli/main.js';
import { startServeConfig } from '../../src/cli/serve/config.js';
import { startEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/wait.js';

const code = (answer: string) => `module.exports = async () => ({ raw: { answer: '${answer}' } });\n`;
const BROKEN = 'module.exports = async () => {\n  return { raw: ( };\n};\n';

async function project(files: Record<string, string>) {
  const cwd = await tempDir();
  const write = async (file: string, text: string) => {
    await mkdir(path.dirname(path.join(cwd, file)), { recursive: true });
    await writeFile(path.join(cwd, file), text);
  };
  for (const [file, text] of Object.entries(files)) await write(file, text);
  return { cwd, write };
}

/** svc.yaml applied to an emulator as `svc serve --config` does, its reports collected. */
async function served(cwd: string, watch = true) {
  const emu = await startEmulator({ inMemory: true });
  const events: EmulatorEventInit[] = [];
  const config = await startServeConfig({
    file: 'svc.yaml',
    cwd,
    env: {},
    url: emu.url,
    managementKey: emu.managementKey,
    watch,
    report: (event) => events.push(event),
  });
  onTestFinished(() => config.close());
  const names = async () =>
    ((await emu.call('GET', '/reactors')).body.data as { name: string; code: string }[])
      .map((reactor) => [reactor.name, reactor.code])
      .sort();
  return { emu, events, config, names };
}

describe('svc serve --config: a broken code file holds back only its own resource', () => {
  test('a first start with a broken file creates the rest and says the broken one is not created', async () => {
    const { cwd } = await project({
      'svc.yaml': 'reactors:\n  good:\n    code: good.js\n  bad:\n    code: bad.js\n',
      'good.js': code('one'),
      'bad.js': BROKEN,
    });
    const { events, names } = await served(cwd);
    expect(await names()).toEqual([['good', code('one')]]);
    expect(events).toContainEqual({
      type: 'warning',
      message: 'reactors.bad held back, not created: bad.js:2:19 Unexpected token (reactors.bad.code)',
    });
    expect(events).toContainEqual(expect.objectContaining({ type: 'reload', target: 'reactors.good created' }));
  });

  test('while a code file is broken, a save that adds a reactor applies it; the broken one keeps its last good code', async () => {
    const { cwd, write } = await project({
      'svc.yaml': 'reactors:\n  hello:\n    code: hello.js\n',
      'hello.js': code('one'),
    });
    const { events, names } = await served(cwd);
    await write('hello.js', BROKEN);
    await eventually(() =>
      expect(events).toContainEqual({
        type: 'reload',
        target: 'reactors.hello',
        file: 'svc.yaml',
        ok: false,
        ms: 0,
        error: 'hello.js:2:19 Unexpected token (reactors.hello.code)',
      }),
    );
    await write('second.js', code('two'));
    await write('svc.yaml', 'reactors:\n  hello:\n    code: hello.js\n  second:\n    code: second.js\n');
    await eventually(async () =>
      expect(await names()).toEqual([
        ['hello', code('one')],
        ['second', code('two')],
      ]),
    );
    expect(events.filter((event) => event.type === 'reload' && event.target === 'svc.yaml')).toEqual([]);
  });

  test('r (reapply) with nothing to change says so', async () => {
    const { cwd } = await project({ 'svc.yaml': 'reactors:\n  hello:\n    code: hello.js\n', 'hello.js': code('one') });
    const { events, config } = await served(cwd, false);
    const before = events.length;
    await config.reapply();
    expect(events.slice(before)).toEqual([
      expect.objectContaining({ type: 'reload', target: 'svc.yaml (no changes)', ok: true }),
    ]);
  });
});

describe('svc serve --config: a first start with a bad svc.yaml', () => {
  test('says svc.yaml was not applied, with every problem, not that "the previous code keeps serving"', async () => {
    const { cwd } = await project({
      'svc.yaml':
        'applications:\n  backend:\n    type: private\n    permissions: [token:use]\nreactors:\n  hello:\n    code: hello.js\n    application: backnd\n  other:\n    code: missing.js\n',
      'hello.js': code('one'),
    });
    const controller = new AbortController();
    let stdout = '';
    const running = runSvc(['serve', '--port', '0', '--in-memory', '--log-format', 'pretty'], {
      stdout: { write: (chunk: string) => (stdout += chunk), isTTY: false, columns: 120 },
      stderr: { write: (chunk: string) => (stdout += chunk) },
      stdin: Readable.from([]) as never,
      env: { HOME: cwd, XDG_CONFIG_HOME: `${cwd}/.config` },
      cwd,
      signal: controller.signal,
    });
    try {
      await eventually(() => expect(stdout).toContain('svc.yaml was not applied'), 20_000);
    } finally {
      controller.abort('SIGINT');
      // 130 when the stop comes while the start (watching svc.yaml) is still under way.
      expect([0, 130]).toContain(await running);
    }
    expect(stdout).not.toContain('previous code keeps serving');
    expect(stdout).toContain(
      'error svc.yaml was not applied (a save that mends it applies it): svc.yaml has 2 problems:\n' +
        '    svc.yaml:8:18 reactors.hello.application: no Application "backnd" (did you mean backend?)\n' +
        '    svc.yaml:10:11 reactors.other.code: cannot read missing.js: no such file\n',
    );
  });
});
