import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startEmulator, unique } from '../helpers/emulator.js';
import { eventually } from '../helpers/wait.js';

/** The sandbox processes this test process started (each test file runs in a process of its own). */
function sandboxPids(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return ppid === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('host.js');
      } catch {
        return false;
      }
    });
}

describe.skipIf(!existsSync('/proc/self/stat'))('stopping the emulator', () => {
  it('stops calls that never end once the grace is over, a spinning one and an awaiting one, with their processes', async () => {
    const emu = await startEmulator({ inMemory: true, shutdownGraceMs: 300 });
    const reactor = async (code: string) => {
      const created = await emu.call('POST', '/reactors', {
        body: { name: unique('endless'), code, configuration: {} },
      });
      expect(created.status, created.text).toBe(201);
      return created.body.id as string;
    };
    const spins = await reactor(
      "module.exports = async () => { console.log('started'); await new Promise((r) => setTimeout(r, 50)); for (;;) {} };",
    );
    const waits = await reactor(
      "module.exports = async () => { console.log('started'); await new Promise(() => {}); };",
    );
    const started = (count: number) =>
      eventually(() => expect(emu.events.filter((event) => event.type === 'console')).toHaveLength(count), 15_000);
    const cut = (call: Promise<unknown>) => call.catch(() => 'cut');
    const waiting = cut(
      emu.call('POST', `/reactors/${waits}/react`, {
        key: emu.privateKey,
        body: { args: {}, callback_url: 'http://127.0.0.1:9/never', timeout_ms: 210_000 },
      }),
    );
    await started(1);
    const spinning = cut(emu.call('POST', `/reactors/${spins}/react`, { key: emu.privateKey, body: { args: {} } }));
    await started(2);
    const pids = sandboxPids();
    expect(pids.length).toBeGreaterThanOrEqual(1);

    // The calls' own timeouts (30 s, 210 s) are far past this test's: only the grace may hold the stop.
    await emu.dispose();
    await Promise.all([waiting, spinning]);
    await eventually(() => expect(sandboxPids().filter((pid) => pids.includes(pid))).toEqual([]));
  });
});
