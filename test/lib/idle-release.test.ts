import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it, onTestFinished } from 'vitest';
import { releaseWhenIdle, type Release } from '../../src/lib/idle-release.js';

describe('releaseWhenIdle', () => {
  // First: the others grow the young generation of this process too, and leave it grown. At the
  // default pace: V8 shrinks the young generation only once the allocation rate of its last 5 s is low.
  it.each([
    ['that ends in a collection', false],
    // V8 would judge the rate from that collection to the release: megabytes over seconds, not low.
    ['whose last collection came before its last megabytes', true],
  ])('shrinks the young generation back after a burst %s', { timeout: 20_000 }, async (_name, tail) => {
    const young = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')!.space_size;
    const before = young();
    let idle: ReturnType<typeof releaseWhenIdle> | undefined;
    const released = new Promise<Release>((resolve) => {
      idle = releaseWhenIdle({ onRelease: resolve });
    });
    onTestFinished(() => idle?.stop());
    // A burst whose objects live a while (the last 50,000 kept): they survive collections and V8
    // grows the young generation, as it does under a load of requests.
    const window: { id: number; text: string }[] = [];
    for (let i = 0; i < 2_000_000; i++) {
      window.push({ id: i, text: `item ${i}` });
      if (window.length > 50_000) window.splice(0, 10_000);
    }
    expect(young()).toBeGreaterThan(before);
    if (tail) {
      youngCollection();
      // 8 MB of short-lived strings, within the grown young generation: no collection comes.
      let kept = 0;
      for (let i = 0; i < 200_000; i++) kept += `tail ${i}`.repeat(4).length;
      expect(kept).toBeGreaterThan(0);
    }

    const release = await released;
    expect(release.youngAfter).toBeLessThan(release.youngBefore);
    expect(release.youngAfter).toBeLessThanOrEqual(before);
    expect(young()).toBeLessThanOrEqual(before);
  });

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

/** A young collection now, with `gc` taken from a context made for it (the global keeps none). */
function youngCollection(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (options: { type: 'minor' }) => void;
  setFlagsFromString('--no-expose-gc');
  gc({ type: 'minor' });
}
