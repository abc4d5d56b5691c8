/**
 * The console budget: lines are counted as well as bytes, per call and with no call running (a
 * top-level timer), in the sandbox and again in the emulator on what a sandbox sends. Needs the
 * build (`npm run build`): the sandbox process runs from dist/.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { LogEntry } from '../../../src/emulator/runtime/index.js';
import { CallLogBudget, StrayLogBudget, cutToBytes } from '../../../src/emulator/runtime/log-budget.js';
import { tempDir } from '../../helpers/temp.js';
import { freshId, invoke, load, runtime, sleep } from './helpers.js';

/** A host script to run instead of the real one (a forged sandbox), for the test that sets it. */
const forged = vi.hoisted(() => ({ host: undefined as string | undefined }));

vi.mock('../../../src/emulator/runtime/sandbox-flags.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/emulator/runtime/sandbox-flags.js')>();
  return {
    hostScript: () => forged.host ?? real.hostScript(),
    sandboxFlags: (...args: Parameters<typeof real.sandboxFlags>) => (forged.host ? [] : real.sandboxFlags(...args)),
  };
});

const CALL_NOTICE =
  /^\[console output cut at \d+ lines \/ [\d.]+ (KiB|bytes): the rest of this call's output is dropped\]$/;
const STRAY_NOTICE = /\[console output with no call running is over its budget/;

/** Polls until `done()` holds, for at most `ms` (a bound for a broken build, not a threshold). */
async function until(done: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!done() && Date.now() < end) await sleep(20);
}

describe('console budget: lines and bytes', () => {
  it('cuts a call printing 100k empty lines at the line cap, with one notice', async () => {
    const seen: LogEntry[] = [];
    const rt = runtime({ onLog: (entry) => seen.push(entry) });
    const instance = await load(
      rt,
      `module.exports = async () => { for (let i = 0; i < 100000; i++) console.log(); return 'done'; };`,
    );
    const result = await invoke(instance, {}, { requestId: 'empty-lines', timeoutMs: 10_000 });
    expect(result.value).toBe('done');
    expect(result.logs).toHaveLength(1001);
    expect(result.logs.slice(0, 1000).every((entry) => entry.text === '')).toBe(true);
    expect(result.logs[1000]!.text).toMatch(CALL_NOTICE);
    expect(result.logs[1000]!.text).toContain('1000 lines / 64 KiB');
    expect(seen.filter((entry) => entry.requestId === 'empty-lines')).toHaveLength(1001);
    // The next call has a budget of its own.
    const again = await invoke(instance, {}, { timeoutMs: 10_000 });
    expect(again.logs).toHaveLength(1001);
  });

  it('bounds output of a top-level setInterval with no call running, with a notice', async () => {
    const seen: LogEntry[] = [];
    const maxLogLines = 20;
    const rate = 5;
    const started = performance.now();
    const rt = runtime({ maxLogLines, strayLogLinesPerSecond: rate, onLog: (entry) => seen.push(entry) });
    const id = freshId();
    await rt.load({
      id,
      version: 1,
      filename: 'ticker.js',
      code: `setInterval(() => { for (let i = 0; i < 50; i++) console.log('tick'); }, 5);
        module.exports = async () => 'ok';`,
    });
    const ticks = () => seen.filter((entry) => entry.text === 'tick').length;
    const notices = () => seen.filter((entry) => STRAY_NOTICE.test(entry.text));
    await until(() => notices().length > 0 || ticks() > 5_000);
    expect(notices()).toHaveLength(1);
    expect(notices()[0]!.text).toMatch(/: \d+ lines? dropped\]$/);
    const beforeNotice = seen.findIndex((entry) => STRAY_NOTICE.test(entry.text));
    expect(beforeNotice).toBeLessThanOrEqual(maxLogLines);
    // The budget refills slowly: a few more lines come, never more than the rate allows.
    await until(() => ticks() >= maxLogLines + 2, 10_000);
    const seconds = (performance.now() - started) / 1000;
    expect(ticks()).toBeGreaterThan(maxLogLines);
    expect(ticks()).toBeLessThanOrEqual(maxLogLines + Math.ceil(rate * seconds) + 1);
    expect(seen.every((entry) => entry.requestId === undefined && entry.instance === id)).toBe(true);
    await rt.unload(id);
  });

  it('caps what a forged sandbox sends past its budget, in a call and with no call running', async () => {
    const dir = await tempDir('svc-forged-');
    forged.host = path.join(dir, 'host.mjs');
    onTestFinished(() => {
      forged.host = undefined;
    });
    await writeFile(forged.host, FORGED_HOST);
    const seen: LogEntry[] = [];
    const maxLogLines = 50;
    const started = performance.now();
    const rt = runtime({ maxLogLines, strayLogLinesPerSecond: 1, onLog: (entry) => seen.push(entry) });
    // The forged sandbox floods 20,000 lines with no call running as it boots, before it loads anything.
    const instance = await load(rt, 'forged');
    const stray = seen.filter((entry) => entry.requestId === undefined);
    const seconds = (performance.now() - started) / 1000;
    // The budget, the emulator's slack (8 lines, and 1 line a second beyond the rate) and its notices.
    expect(stray.length).toBeGreaterThan(0);
    expect(stray.length).toBeLessThanOrEqual(maxLogLines + 8 + Math.ceil(2 * seconds) + 2);
    expect(stray.some((entry) => STRAY_NOTICE.test(entry.text))).toBe(true);
    // In a call: 20,000 empty lines, then the result.
    const result = await invoke(instance, {}, { requestId: 'forged-call', timeoutMs: 10_000 });
    expect(result.value).toBe('done');
    expect(result.logs.length).toBeLessThanOrEqual(maxLogLines + 2);
    expect(result.logs.at(-1)!.text).toMatch(CALL_NOTICE);
    expect(seen.filter((entry) => entry.requestId === 'forged-call')).toHaveLength(result.logs.length);
  });
});

describe('log-budget', () => {
  it('counts a call by lines and by bytes, whichever runs out first', () => {
    const byLines = new CallLogBudget({ maxLines: 3, maxBytes: 1000 });
    const sent = Array.from({ length: 10 }, () => byLines.take(() => ''));
    expect(sent.slice(0, 3)).toEqual(['', '', '']);
    expect(sent[3]).toMatch(CALL_NOTICE);
    expect(sent.slice(4)).toEqual(Array(6).fill(undefined));
    expect(byLines.dropped).toBe(7);

    const byBytes = new CallLogBudget({ maxLines: 100, maxBytes: 10 });
    expect(byBytes.take(() => 'abcdef')).toBe('abcdef');
    expect(byBytes.take(() => 'ghijkl')).toMatch(/^ghij… \[console output cut at 100 lines \/ 10 bytes/);
    expect(byBytes.take(() => '')).toBeUndefined();
  });

  it('formats no line past the budget', () => {
    const budget = new CallLogBudget({ maxLines: 1, maxBytes: 100 });
    let formatted = 0;
    for (let i = 0; i < 5; i++) budget.take(() => `line ${++formatted}`);
    expect(formatted).toBe(1);
  });

  it('cuts by bytes without splitting a character', () => {
    expect(cutToBytes('ééé', 3)).toBe('é');
    expect(cutToBytes('a€b', 3)).toBe('a');
    expect(cutToBytes('abc', 10)).toBe('abc');
  });

  it('refills stray output slowly, with one notice per window counting what was dropped', () => {
    let now = 0;
    const budget = new StrayLogBudget({ maxLines: 2, maxBytes: 1000, linesPerSecond: 1 }, () => now);
    expect([budget.take(() => 'a'), budget.take(() => 'b')]).toEqual(['a', 'b']);
    expect(budget.take(() => 'c')).toMatch(/: 1 line dropped\]$/);
    expect(budget.take(() => 'd')).toBeUndefined();
    now += 1000;
    expect(budget.take(() => 'e')).toBe('e');
    expect(budget.take(() => 'f')).toBeUndefined();
    now += 10_000;
    expect([budget.take(() => 'g'), budget.take(() => 'h')]).toEqual(['g', 'h']);
    expect(budget.take(() => 'i')).toMatch(/: 3 lines dropped since the last notice\]$/);
    expect(budget.dropped).toBe(4);
  });

  it('the notice on a line cut at the byte budget says the line was cut, not "0 lines dropped"', () => {
    const budget = new StrayLogBudget({ maxLines: 10, maxBytes: 10, linesPerSecond: 1 }, () => 0);
    const cut = budget.take(() => 'abcdefghijklmnop');
    expect(cut).toMatch(/^abcdefghij… \[console output with no call running is over its budget/);
    expect(cut).not.toMatch(/\b0 lines dropped/);
    expect(cut).toMatch(/: this line was cut, and the lines after it are dropped\]$/);
    expect(budget.take(() => 'next')).toBeUndefined();
    expect(budget.dropped).toBe(1);
  });
});

/**
 * A sandbox that keeps to the protocol's shapes but not to its budgets: 20,000 lines with no call
 * running as it boots, and 20,000 empty lines in every call. It answers probes, so it is not stopped.
 */
const FORGED_HOST = `
import { Socket } from 'node:net';
const socket = new Socket({ fd: 3, readable: true, writable: true });
const send = (message) => {
  const body = Buffer.from(JSON.stringify(message));
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length);
  socket.write(Buffer.concat([header, body]));
};
let buffered = Buffer.alloc(0);
socket.on('data', (chunk) => {
  buffered = Buffer.concat([buffered, chunk]);
  while (buffered.length >= 4 && buffered.length >= 4 + buffered.readUInt32BE(0)) {
    const length = buffered.readUInt32BE(0);
    const message = JSON.parse(buffered.subarray(4, 4 + length).toString());
    buffered = buffered.subarray(4 + length);
    receive(message);
  }
});
socket.on('close', () => process.exit(0));
function receive(message) {
  if (message.type === 'load') send({ type: 'loaded', vid: message.vid });
  if (message.type === 'probe') send({ type: 'probe', seq: message.seq, idleCpuMs: 0, idleWallMs: 0 });
  if (message.type === 'invoke') {
    for (let i = 0; i < 20000; i++) send({ type: 'log', id: message.id, vid: message.vid, level: 'log', text: '' });
    send({ type: 'result', id: message.id, ok: true, value: 'done' });
  }
}
send({ type: 'booted' });
for (let i = 0; i < 20000; i++) send({ type: 'log', id: null, vid: null, level: 'log', text: 'flood' });
`;
