/**
 * The channel between the emulator and a sandbox process, the check of what a sandbox sends (a
 * sandbox is not trusted to keep to the protocol), and the rule by which a busy one is replaced.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Channel } from '../../../src/emulator/runtime/channel.js';
import { checkedMessage } from '../../../src/emulator/runtime/inbound.js';
import { DEFAULT_WINDOWS } from '../../../src/emulator/runtime/options.js';
import { busyBalance } from '../../../src/emulator/runtime/protocol.js';

function frame(text: string): Buffer {
  const body = Buffer.from(text);
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length);
  return Buffer.concat([header, body]);
}

function listen(maxFrameBytes = 1024) {
  const stream = new PassThrough();
  const got: unknown[] = [];
  const broken: string[] = [];
  new Channel<unknown, unknown>(stream, maxFrameBytes, {
    message: (message) => got.push(message),
    broken: (reason) => broken.push(reason),
  });
  return { stream, got, broken };
}

describe('Channel', () => {
  it('reads frames split across chunks and several frames in one chunk', () => {
    const { stream, got } = listen();
    const both = Buffer.concat([frame('{"a":1}'), frame('[2]')]);
    for (const byte of both) stream.write(Buffer.from([byte]));
    stream.write(Buffer.concat([frame('3'), frame('"four"')]));
    expect(got).toEqual([{ a: 1 }, [2], 3, 'four']);
  });

  it('writes the first frame of a turn at once, and the rest of the turn in one write, in order', async () => {
    const wire = new PassThrough();
    const writes: number[] = [];
    const write = wire.write.bind(wire);
    wire.write = ((chunk: Buffer) => (writes.push(chunk.length), write(chunk))) as typeof wire.write;
    const sender = new Channel<unknown, unknown>(wire, 1024, { message: () => {}, broken: () => {} });
    const got: unknown[] = [];
    new Channel<unknown, unknown>(wire, 1024, { message: (message) => got.push(message), broken: () => {} });
    sender.send({ n: 1 });
    sender.sendText('{"n":2}');
    sender.send({ n: 3 });
    expect(writes).toEqual([4 + 7]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual([4 + 7, 2 * (4 + 7)]);
    sender.send({ n: 4 });
    expect(writes).toHaveLength(3);
    await new Promise((resolve) => setImmediate(resolve));
    expect(got).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
  });

  it('breaks on a frame over its limit before reading it, and on a frame that is not JSON', () => {
    const over = listen(16);
    over.stream.write(frame(`"${'x'.repeat(40)}"`).subarray(0, 4));
    expect(over.broken).toEqual(['a frame of 42 bytes is over the limit of 16']);
    const garbled = listen();
    garbled.stream.write(frame('{nope'));
    expect(garbled.broken).toEqual(['a frame is not JSON']);
  });
});

describe('checkedMessage', () => {
  it('accepts the messages of the protocol', () => {
    for (const message of [
      { type: 'booted' },
      { type: 'loaded', vid: 'a@1#1' },
      { type: 'result', id: 1, ok: true, value: null },
      {
        type: 'result',
        id: 1,
        ok: false,
        error: { kind: 'user', name: 'Error', message: 'x', custom: { status: null, headers: { a: 'b' }, body: 1 } },
      },
      { type: 'log', id: null, vid: null, level: 'warn', text: 'x' },
      { type: 'rpc', id: 1, invocation: 2, method: 'tokens.create', params: '{}' },
      { type: 'probe', seq: 3, idleCpuMs: 0, idleWallMs: 1.5 },
    ]) {
      expect(checkedMessage(message)).toBe(message);
    }
  });

  it.each([
    ['null', null],
    ['an array', []],
    ['no type', {}],
    ['an unknown type', { type: 'shutdown' }],
    ['a result with no error', { type: 'result', id: 1, ok: false }],
    ['a result with a string id', { type: 'result', id: '1', ok: true, value: 1 }],
    ['a load error with no error', { type: 'load-error', vid: 'a' }],
    ['an rpc for a method that is not one', { type: 'rpc', id: 1, invocation: 2, method: 'constructor', params: '{}' }],
    ['a log of another level', { type: 'log', id: null, vid: null, level: 'fatal', text: 'x' }],
    ['a log whose text is not text', { type: 'log', id: 1, vid: null, level: 'log', text: { toString: 1 } }],
    [
      'an error whose stack is not text',
      { type: 'result', id: 1, ok: false, error: { kind: 'user', name: 'E', message: 'm', stack: 5 } },
    ],
    [
      'custom headers that are not text',
      {
        type: 'result',
        id: 1,
        ok: false,
        error: { kind: 'user', name: 'E', message: 'm', custom: { status: 200, headers: { a: 1 }, body: null } },
      },
    ],
  ])('refuses %s', (_name, message) => {
    expect(() => checkedMessage(message)).toThrow();
  });
});

describe('busyBalance', () => {
  it('adds busy idle windows, takes quiet ones off down to 0, and skips windows too short to judge', () => {
    // Half a core or more over a window is busy: 30 ms of CPU in 50 ms, not 20.
    expect(busyBalance(0, 30, 50)).toBe(50);
    expect(busyBalance(50, 30, 50)).toBe(100);
    expect(busyBalance(100, 20, 50)).toBe(50);
    expect(busyBalance(50, 0, 80)).toBe(0);
    // 10 ms is too short to say: the balance stands.
    expect(busyBalance(100, 10, 10)).toBe(100);
  });

  it('takes a second of busy windows to replace a process, more than a collection after a large call lasts', () => {
    // A collection measured after a call in a 60 MB heap: two or three busy 50 ms windows, then quiet.
    let balance = 0;
    for (const [cpu, wall] of [
      [95, 50],
      [96, 50],
      [33, 50],
      [2, 50],
      [1, 50],
      [0, 50],
    ])
      balance = busyBalance(balance, cpu!, wall!);
    expect(balance).toBe(0);
    // A timer left spinning: every window busy.
    expect(windowsToReplace([true])).toBe(20);
    // Work that pauses one window in every few still adds up; quiet half the time, it never does.
    expect(windowsToReplace([true, true, true, false])).toBeLessThan(80);
    expect(windowsToReplace([true, false])).toBe(Number.POSITIVE_INFINITY);
  });
});

/** How many 50 ms probe windows, busy or quiet in the pattern given (repeated), replace a process (up to 10,000). */
function windowsToReplace(pattern: boolean[]): number {
  let balance = 0;
  for (let window = 0; window < 10_000; window++) {
    balance = busyBalance(balance, pattern[window % pattern.length] ? 50 : 0, 50);
    if (balance >= DEFAULT_WINDOWS.busyForMs) return window + 1;
  }
  return Number.POSITIVE_INFINITY;
}
