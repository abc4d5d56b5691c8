import { describe, expect, it } from 'vitest';
import { Spool } from '../../src/emulator/recording/spool.js';

describe('the recording spool', () => {
  it('keeps and reads back what it was given', async () => {
    const spool = new Spool();
    const spans = ['one', 'two', 'é'.repeat(1000)].map((text) => spool.append(text));
    expect(await Promise.all(spans.map((span) => spool.read(span)))).toEqual(['one', 'two', 'é'.repeat(1000)]);
    await spool.close();
  });

  it('a temporary folder it cannot make fails its reads, not the process (no unhandled rejection)', async () => {
    const spool = new Spool();
    const saved = process.env.TMPDIR;
    // os.tmpdir() is read as the first append opens the file, synchronously.
    process.env.TMPDIR = '/nonexistent/svc-spool-test';
    let span: ReturnType<Spool['append']>;
    try {
      span = spool.append('kept');
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
    // The write settles (failed) before anything reads: as in a recording, whose reads come later.
    await expect.poll(() => spool.pendingBytes).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    await expect(spool.read(span)).rejects.toThrow(/ENOENT/);
    // Later parts fail the same way, and closing still settles.
    await expect(spool.read(spool.append('later'))).rejects.toThrow(/ENOENT/);
    await spool.close();
  });
});
