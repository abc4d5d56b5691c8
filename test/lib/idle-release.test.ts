import { getHeapSpaceStatistics } from 'node:v8';
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

  it('shrinks the young generation a burst grew back to its size before', async () => {
    const young = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')!.space_size;
    const before = young();
    let idle: ReturnType<typeof releaseWhenIdle> | undefined;
    const released = new Promise<Release>((resolve) => {
      idle = releaseWhenIdle({ idleMs: 50, onRelease: resolve });
    });
    onTestFinished(() => idle?.stop());
    // A burst whose objects live a while (the last 50,000 kept): they survive collections, and V8
    // grows the young generation, as it does under a load of requests.
    const window: { id: number; text: string }[] = [];
    for (let i = 0; i < 2_000_000; i++) {
      window.push({ id: i, text: `item ${i}` });
      if (window.length > 50_000) window.splice(0, 10_000);
    }
    expect(young()).toBeGreaterThan(before);

    const release = await released;
    expect(release.youngAfter).toBeLessThanOrEqual(before);
    expect(young()).toBeLessThanOrEqual(before);
  });

  it('leaves no gc behind: neither on the global object nor in contexts made later', () => {
    const idle = releaseWhenIdle({ idleMs: 60_000 });
    onTestFinished(() => idle.stop());
    expect(typeof (globalThis as { gc?: unknown }).gc).toBe('undefined');
    expect(runInNewContext('typeof gc')).toBe('undefined');
  });
});
