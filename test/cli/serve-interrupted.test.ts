/**
 * Ctrl-C while `svc serve` applies svc.yaml at its start (issue 31): the apply starts no further
 * change (the ones under way end whole), the emulator is disposed and serve exits 130; it used to
 * wait for the whole apply and exit 0. In the dashboard, Ctrl-C is said as an interruption, not `q`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { spawnSvc } from '../helpers/process.js';
import { plain, svcInPty } from '../helpers/pty.js';
import { tempDir } from '../helpers/temp.js';

const REACTORS = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8'];
/** Code whose load keeps the sandbox busy for a second: the apply takes seconds. */
const SLOW =
  'const until = Date.now() + 1000; while (Date.now() < until);\nmodule.exports = async () => ({ raw: {} });\n';

async function slowProject(): Promise<string> {
  const cwd = await tempDir();
  await mkdir(path.join(cwd, 'reactors'));
  for (const name of REACTORS) await writeFile(path.join(cwd, 'reactors', `${name}.js`), SLOW);
  const reactors = REACTORS.map((name) => `  ${name}:\n    code: reactors/${name}.js\n`).join('');
  await writeFile(path.join(cwd, 'svc.yaml'), `reactors:\n${reactors}`);
  return cwd;
}

describe('Ctrl-C while serve applies svc.yaml at its start', () => {
  test('SIGINT stops the apply between changes, disposes the emulator and exits 130', async () => {
    const cwd = await slowProject();
    const serve = spawnSvc(['serve', '--port', '0', '--in-memory', '--log-format', 'json'], { cwd });
    // The first reactor is created: the apply is under way.
    await serve.waitForLine((line) => line.includes('"POST"') && line.includes('"/reactors"'), 20_000);
    serve.child.kill('SIGINT');
    const { code } = await serve.exited;
    const events = serve.lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
    expect(code, serve.stderr()).toBe(130);
    const created = events.filter((event) => event.event === 'reload' && event.ok === true);
    expect(created.length).toBeLessThan(REACTORS.length);
    const warning = events.find((event) => event.event === 'warning' && /interrupted/.test(event.message));
    expect(warning?.message).toBe(`svc.yaml: interrupted, ${REACTORS.length - created.length} changes not applied.`);
    expect(events.at(-1)).toMatchObject({ event: 'stopped' });
  });

  test('in the dashboard, Ctrl-C is an interruption: "Stopping (interrupted)", exit 130', async () => {
    const cwd = await slowProject();
    const run = svcInPty(['serve', '--port', '0', '--in-memory'], { cwd, columns: 120 });
    // The first reactor is created (the word painted: colour escapes between).
    await run.waitFor(/POST(\u001b\[[0-9;]*m)* \/reactors/, 15_000);
    run.type('\u0003');
    expect(await run.exited).toBe(130);
    const screen = plain(run.output());
    expect(screen).toContain('Stopping (interrupted)');
    expect(screen).not.toContain('Stopping (q)');
    expect(screen, screen).toContain('interrupted,');
  });
});
