import { describe, expect, it } from 'vitest';
import { Teardown } from '../../src/lib/teardown.js';

describe('Teardown', () => {
  it('closes the last opened first', async () => {
    const closed: string[] = [];
    const teardown = new Teardown();
    for (const name of ['store', 'runtime', 'server']) teardown.push(() => void closed.push(name));
    await teardown.run();
    expect(closed).toEqual(['server', 'runtime', 'store']);
  });

  it('waits for each close before the next', async () => {
    const closed: string[] = [];
    const teardown = new Teardown();
    teardown.push(() => void closed.push('first opened'));
    teardown.push(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      closed.push('last opened');
    });
    await teardown.run();
    expect(closed).toEqual(['last opened', 'first opened']);
  });

  it('runs every close when one fails, then throws the first failure', async () => {
    const closed: string[] = [];
    const teardown = new Teardown();
    teardown.push(() => void closed.push('store'));
    teardown.push(() => {
      throw new Error('runtime would not stop');
    });
    teardown.push(() => Promise.reject(new Error('server would not stop')));
    await expect(teardown.run()).rejects.toThrow('server would not stop');
    expect(closed).toEqual(['store']);
  });

  it('runs each close once: a second run closes only what was pushed since', async () => {
    let closes = 0;
    const teardown = new Teardown();
    teardown.push(() => void closes++);
    await teardown.run();
    await teardown.run();
    expect(closes).toBe(1);
  });
});
