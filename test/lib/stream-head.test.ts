import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readAll } from '../../src/lib/read-all.js';
import { type StreamHead, tapHead } from '../../src/lib/stream-head.js';

function told(): { body: Promise<StreamHead>; done: (body: StreamHead) => void } {
  let done!: (body: StreamHead) => void;
  const body = new Promise<StreamHead>((resolve) => (done = resolve));
  return { body, done };
}

describe('tapHead', () => {
  it('passes every byte on and keeps the first `limit` of them', async () => {
    const { body, done } = told();
    const tapped = tapHead(Readable.from([Buffer.from('hello '), 'wide ', Buffer.from('world')]), 8, done);
    expect((await readAll(tapped)).toString()).toBe('hello wide world');
    const head = await body;
    expect(head.head.toString()).toBe('hello wi');
    expect(head).toMatchObject({ size: 16, complete: true });
  });

  it('tells of a stream cut off before its end as not complete', async () => {
    const { body, done } = told();
    const source = new Readable({ read() {} });
    const tapped = tapHead(source, 100, done);
    tapped.resume();
    source.push('part');
    await new Promise((resolve) => setImmediate(resolve));
    source.destroy(new Error('reset'));
    expect(await body).toMatchObject({ size: 4, complete: false });
    expect((await body).head.toString()).toBe('part');
  });
});
