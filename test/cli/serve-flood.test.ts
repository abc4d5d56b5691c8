import { describe, expect, test } from 'vitest';
import type { IO } from '../../src/cli/io/process.js';
import { createServeLog } from '../../src/cli/serve/log.js';
import { createServeRelay } from '../../src/cli/serve/relay.js';
import type { EmulatorEvent } from '../../src/emulator/index.js';
import { renderServeDashboard } from '../../src/ui/render-serve-dashboard.js';
import { startEmulator } from '../helpers/emulator.js';
import { FakeStdin, FakeStdout, plain } from '../helpers/terminal.js';
import { eventually } from '../helpers/wait.js';

/** A reactor that prints as much as its console lets it. */
const LOUD = `module.exports = async () => {
  for (let i = 0; i < 5000; i++) console.log('loud line ' + i);
  return { raw: { ok: true } };
};
`;

const BURSTS = 20;
const PER_BURST = 5_000;

describe('svc serve under a flood of events (issue 25: the dashboard stalled /health for seconds)', () => {
  test('the emulator answers /health while 100k console lines are fed to the dashboard and the pretty log', async () => {
    const emu = await startEmulator({ inMemory: true });
    // Wired as `svc serve` wires them: the emulator's events through the relay to the dashboard and the log.
    const relay = createServeRelay();
    emu.emulator.events.subscribe(relay.publish);
    const screen = new FakeStdout();
    const dashboard = renderServeDashboard({
      url: emu.url,
      keys: [],
      events: relay,
      onQuit: () => {},
      stdout: screen as unknown as NodeJS.WriteStream,
      stderr: new FakeStdout() as unknown as NodeJS.WriteStream,
      stdin: new FakeStdin({ tty: false }) as unknown as NodeJS.ReadStream,
    });
    let logged = '';
    const io = { stdout: { write: (text: string) => (logged += text), isTTY: true }, cwd: '/' } as unknown as IO;
    const log = createServeLog('pretty', io, false);
    log.release();
    relay.subscribe(log.event);

    const created = await emu.call('POST', '/reactors', { body: { name: 'loud', code: LOUD, configuration: {} } });
    expect(created.status, created.text).toBe(201);
    // A burst per turn of the event loop, as a sandbox's frames bring console lines, and a loud reactor besides.
    let bursts = 0;
    const flood = (async () => {
      for (; bursts < BURSTS; bursts++) {
        for (let i = 0; i < PER_BURST; i++) {
          relay.publish({
            type: 'console',
            source: 'flood',
            tenantId: emu.tenantId,
            level: 'log',
            text: `flood line ${bursts}.${i}`,
            time: new Date().toISOString(),
          } as EmulatorEvent);
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const loud = emu.call('POST', `/reactors/${created.body.id}/react`, { key: emu.privateKey, body: { args: {} } });
    const health = await emu.call('GET', '/health', { key: null });
    expect(health.status).toBe(200);
    await flood;
    expect((await loud).status).toBe(200);

    // Both say that lines were dropped, and neither wrote anything like 100k lines.
    await eventually(() => expect(plain(screen.output)).toMatch(/[\d,]+ lines dropped/));
    await eventually(() => expect(logged).toMatch(/[\d,]+ lines dropped/));
    await dashboard.unmount();
    log.stopped();
    expect(plain(screen.output).match(/flood line/g)?.length ?? 0).toBeLessThan((BURSTS * PER_BURST) / 10);
    expect(logged.match(/flood line/g)?.length ?? 0).toBeLessThan((BURSTS * PER_BURST) / 10);
  });
});
