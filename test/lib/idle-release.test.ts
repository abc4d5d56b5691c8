import { runInNewContext } from 'node:vm';
import { describe, expect, it, onTestFinished } from 'vitest';
import { releaseWhenIdle, type Release } from '../../src/lib/idle-release.js';

describe('releaseWhenIdle', () => {
  it('gives back what a burst grew of the heap, once the process is quiet', async () => {
    let idle: ReturnType<typeof releaseWhenIdle> | undefined;
    const released = new Promise<Release>((resolve) => {
      idle = releaseWhenIdle({ idleMs: 25, onRelease: resolve });
    });
    onTestFinished(() => idle?.stop());
    // A burst: 200,000 short-lived objects, enough to grow the old generation by megabytes.
    let burst: { id: number; text: string }[] | undefined = [];
    for (let i = 0; i < 200_000; i++) burst.push({ id: i, text: `item ${i}` });
    expect(burst.length).toBe(200_000);
    burst = undefined;

    const release = await released;
    expect(release.committedAfter).toBeLessThan(release.committedBefore);
    expect(idle!.releases).toBe(1);
  });

  it('waits while the process says it has work under way, and releases once it has none', async () => {
    let busy = true;
    let idle: ReturnType<typeof releaseWhenIdle> | undefined;
    const released = new Promise<Release>((resolve) => {
      idle = releaseWhenIdle({ idleMs: 25, isIdle: () => !busy, onRelease: resolve });
    });
    onTestFinished(() => idle?.stop());
    let burst: { id: number; text: string }[] | undefined = [];
    for (let i = 0; i < 200_000; i++) burst.push({ id: i, text: `item ${i}` });
    burst = undefined;
    // Several quiet windows go by with a call under way: nothing is collected.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(idle!.releases).toBe(0);

    busy = false;
    const release = await released;
    expect(release.committedAfter).toBeLessThan(release.committedBefore);
    expect(idle!.releases).toBe(1);
  });

  it('leaves no gc behind: neither on the global object nor in contexts made later', () => {
    const idle = releaseWhenIdle({ idleMs: 60_000 });
    onTestFinished(() => idle.stop());
    expect(typeof (globalThis as { gc?: unknown }).gc).toBe('undefined');
    expect(runInNewContext('typeof gc')).toBe('undefined');
  });
});
