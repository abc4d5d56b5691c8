import { describe, expect, test } from 'vitest';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { createTenant, startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/wait.js';

const TALKS = `module.exports = async (req) => {
  console.log('said', req.args.word ?? 'nothing');
  return { raw: { ok: true } };
};
`;

async function reactor(emu: TestEmulator, name: string, key = emu.managementKey): Promise<string> {
  const created = await emu.call('POST', '/reactors', { key, body: { name, code: TALKS, configuration: {} } });
  expect(created.status, created.text).toBe(201);
  return created.body.id;
}

async function invoke(emu: TestEmulator, id: string, word: string, key = emu.privateKey): Promise<void> {
  expect((await emu.call('POST', `/reactors/${id}/react`, { key, body: { args: { word } } })).status).toBe(200);
}

async function setup() {
  const emu = await startEmulator({ inMemory: true });
  const cwd = await tempDir();
  const target = ['--base-url', emu.url, '--management-key', emu.managementKey, '--api-key', emu.privateKey];
  return { emu, cwd, target };
}

describe('svc logs', () => {
  test("prints the tenant's recent events as lines on a terminal, JSON lines into a pipe, filtered by reactor", async () => {
    const { emu, cwd, target } = await setup();
    const other = await createTenant(emu);
    await invoke(emu, await reactor(emu, 'first'), 'one');
    await invoke(emu, await reactor(emu, 'second'), 'two');
    await invoke(emu, await reactor(emu, 'theirs', other.management_key), 'secret', other.private_key);
    await eventually(() => expect(emu.events.filter((event) => event.type === 'console')).toHaveLength(3));

    const pretty = await runSvc(['logs', '--no-color', ...target], { cwd, tty: true });
    expect(pretty.code, pretty.stderr).toBe(0);
    expect(pretty.stdout).toMatch(/^\d\d:\d\d:\d\d .*\[first\] said one$/m);
    expect(pretty.stdout).toMatch(/^\d\d:\d\d:\d\d .*reactor .*second.* 200 /m);
    expect(pretty.stdout).not.toContain('theirs');

    const piped = await runSvc(['logs', '--reactor', 'first', ...target], { cwd });
    expect(piped.code, piped.stderr).toBe(0);
    const events = piped.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(events).toContainEqual(expect.objectContaining({ type: 'console', source: 'first', text: 'said one' }));
    expect(events).toContainEqual(expect.objectContaining({ type: 'invocation', name: 'first', status: 200 }));
    expect(piped.stdout).not.toContain('second');
    expect(piped.stdout).not.toContain(emu.managementKey);

    const failures = await runSvc(['logs', '--status', '5xx', '--json', ...target], { cwd, tty: true });
    expect(failures.code, failures.stderr).toBe(0);
    expect(failures.stdout).toBe('');
  });

  test('a refused key and a status it cannot read are one-line errors', async () => {
    const { emu, cwd } = await setup();
    const refused = await runSvc(['logs', '--base-url', emu.url, '--management-key', 'key_wrong'], { cwd });
    expectOneLineError(refused, 1, /not valid/);
    const bad = await runSvc(
      ['logs', '--status', 'bad', '--base-url', emu.url, '--management-key', emu.managementKey],
      { cwd },
    );
    expectOneLineError(bad, 2, /--status must be/);
  });

  test('--follow prints new events; Ctrl-C exits 0', async () => {
    const { emu, cwd, target } = await setup();
    const id = await reactor(emu, 'live');
    await invoke(emu, id, 'before');
    const stop = new AbortController();
    let seen = '';
    const running = runSvc(['logs', '--follow', '--reactor', 'live', ...target], {
      cwd,
      signal: stop.signal,
      onStdout: (chunk) => (seen += chunk),
    });
    await eventually(() => expect(seen).toContain('said before'));
    await invoke(emu, id, 'after');
    await eventually(() => expect(seen).toContain('said after'));
    stop.abort();
    const result = await running;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
  });

  test('--follow exits 1, saying so, when the emulator stops', async () => {
    const { emu, cwd, target } = await setup();
    await invoke(emu, await reactor(emu, 'live'), 'hello');
    let seen = '';
    const running = runSvc(['logs', '--follow', ...target], { cwd, onStdout: (chunk) => (seen += chunk) });
    await eventually(() => expect(seen).toContain('said hello'));
    await emu.dispose();
    const result = await running;
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^Error: The event stream ended unexpectedly/);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});

describe('svc invoke reactor --logs', () => {
  test("prints that call's own console lines on stderr after the result", async () => {
    const { emu, cwd, target } = await setup();
    const id = await reactor(emu, 'talks');
    await invoke(emu, id, 'earlier call');
    const result = await runSvc(['invoke', 'reactor', 'talks', '--args', '{"word":"this call"}', '--logs', ...target], {
      cwd,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ raw: { ok: true } });
    expect(result.stderr).toMatch(/^\d\d:\d\d:\d\d \[talks\] said this call\n$/);
  });
});
