import { render } from 'ink-testing-library';
import { beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import type { IO } from '../../src/cli/io/process.js';
import { createServeLog } from '../../src/cli/serve/log.js';
import type { EmulatorEvent } from '../../src/emulator/index.js';
import { LiveServeDashboard } from '../../src/ui/live-serve-dashboard.js';
import { createServeFeed } from '../../src/ui/serve-feed.js';
import { runSvc } from '../helpers/cli.js';
import { sharedEmulator, type TestEmulator } from '../helpers/emulator.js';
import { plain } from '../helpers/terminal.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/wait.js';

/**
 * What a tenant may put in a name or print from its code: a cleared screen, a window title (OSC 0 with
 * BEL), an OSC 8 hyperlink, a CR that would overwrite the line, a line separator and a right-to-left
 * override. None of it may reach an operator's terminal as is (issue 26).
 */
const HOSTILE =
  '\u001b[2J\u001b]0;pwned\u0007\u001b]8;;https://evil.example\u001b\\link\u001b]8;;\u001b\\\r\u2028\u202egpj';
/** How each output shows it: every character escaped, the rest as it was. */
const SHOWN =
  '\\u001b[2J\\u001b]0;pwned\\u0007\\u001b]8;;https://evil.example\\u001b\\link\\u001b]8;;\\u001b\\\\r\\u2028\\u202egpj';
const NAME = `evil${HOSTILE}`;
/** A line of console text that pretends to be the emulator's own request line. */
const FORGED = '12:00:00 POST /applications 201 3ms';

const CODE = `module.exports = async (req) => {
  console.log(req.args.text + '\\n' + ${JSON.stringify(FORGED)});
  if (req.args.fail) throw new Error(req.args.text);
  return { raw: { ok: true } };
};
`;

/** Whatever a terminal would act on: ESC (after colours are stripped), BEL, CR, C1, U+2028 and the bidi controls. */
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** Text as printed, less the line breaks (and indentation) a terminal's width put in long lines. */
const unwrapped = (text: string) => text.replace(/\n */g, '');

function expectSafe(output: string): void {
  expect(output).not.toMatch(RAW);
  expect(unwrapped(output)).toContain(SHOWN);
  // The forged line is there, but never at column 0, where it would pass for the emulator's.
  expect(output).toContain(FORGED);
  expect(output).not.toMatch(new RegExp(`^${FORGED}`, 'm'));
}

/** One emulator for the file, with the hostile reactor. */
const shared = sharedEmulator();
let reactorId = '';
beforeAll(async () => {
  const created = await shared().call('POST', '/reactors', { body: { name: NAME, code: CODE, configuration: {} } });
  expect(created.status, created.text).toBe(201);
  reactorId = created.body.id;
});

/** Calls the hostile reactor (its console line is out by the time it answers, or soon after). */
async function invoke(emu: TestEmulator, fail = false): Promise<void> {
  const answer = await emu.call('POST', `/reactors/${reactorId}/react`, {
    key: emu.privateKey,
    body: { args: { text: HOSTILE, fail } },
  });
  expect(answer.status, answer.text).toBe(fail ? 500 : 200);
  await eventually(() => expect(emu.events.some((event) => event.type === 'console')).toBe(true));
}

/** Follows the emulator's events until the test ends. */
function follow(emu: TestEmulator, listener: (event: EmulatorEvent) => void): () => void {
  const stop = emu.emulator.events.subscribe(listener);
  onTestFinished(stop);
  return stop;
}

describe('user-chosen text reaches every terminal output escaped', () => {
  test('the pretty serve log: the name, the console text (its lines indented) and the error', async () => {
    let written = '';
    const io = { stdout: { write: (text: string) => (written += text), isTTY: true }, cwd: '/' } as unknown as IO;
    const log = createServeLog('pretty', io, true);
    log.release();
    const emu = shared();
    let runs = 0;
    follow(emu, (event) => {
      log.event(event);
      if (event.type === 'invocation') runs++;
    });
    await invoke(emu, true);
    await eventually(() => expect(runs).toBe(1));
    log.flush();
    expectSafe(plain(written));
  });

  test('the dashboard (ink)', async () => {
    const emu = shared();
    const app = render(
      <LiveServeDashboard
        url={emu.url}
        keys={[]}
        resources={[{ kind: 'reactor', name: NAME }]}
        feed={createServeFeed(emu.emulator.events)}
        onQuit={() => {}}
      />,
    );
    try {
      await invoke(emu, true);
      const output = () => plain(app.frames.join('\n'));
      await eventually(() => expect(unwrapped(output())).toMatch(/reactor evil.* 500 /));
      expectSafe(output());
    } finally {
      app.unmount();
    }
  });

  test('svc logs, a table (ink and plain) and an error line', async () => {
    const emu = shared();
    const cwd = await tempDir();
    const target = ['--base-url', emu.url, '--management-key', emu.managementKey, '--api-key', emu.privateKey];
    await invoke(emu);

    const logs = await runSvc(['logs', ...target], { cwd, tty: true });
    expect(logs.code, logs.stderr).toBe(0);
    expectSafe(plain(logs.stdout));

    for (const color of [[], ['--no-color']]) {
      const list = await runSvc(['reactors', 'list', ...color, ...target], { cwd, tty: true });
      expect(list.code, list.stderr).toBe(0);
      expect(plain(list.stdout)).not.toMatch(RAW);
      expect(unwrapped(plain(list.stdout))).toContain(`evil${SHOWN}`);
    }

    const failed = await runSvc(
      ['invoke', 'reactor', reactorId, '--args', JSON.stringify({ text: HOSTILE, fail: true }), ...target],
      {
        cwd,
      },
    );
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^Error: /);
    expect(failed.stderr).not.toMatch(RAW);
    expect(failed.stderr).toContain(SHOWN);
    expect(failed.stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});
