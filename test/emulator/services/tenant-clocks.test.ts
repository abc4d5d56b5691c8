import { describe, expect, it } from 'vitest';
import { EmulatorError } from '../../../src/emulator/errors.js';
import { TenantClocks } from '../../../src/emulator/services/tenant-clocks.js';

const HOUR = 3_600_000;
/** A clock of the emulator that stands still unless the test moves it. */
const T0 = Date.parse('2026-06-15T12:00:00Z');

describe('TenantClocks', () => {
  it('reads the emulator clock for every tenant until one is moved, and moves only that one', async () => {
    const clocks = new TenantClocks(() => new Date(T0));
    expect(clocks.ms('a')).toBe(T0);
    await clocks.advance('a', 25 * HOUR);
    expect(clocks.ms('a')).toBe(T0 + 25 * HOUR);
    expect(clocks.offset('a')).toBe(25 * HOUR);
    expect(clocks.ms('b')).toBe(T0);
    expect(clocks.offset('b')).toBe(0);
    const now = clocks.snapshot();
    expect([now('a'), now('b')]).toEqual([T0 + 25 * HOUR, T0]);
    expect(clocks.emulatorNow().getTime()).toBe(T0);
    clocks.forget('a');
    expect(clocks.ms('a')).toBe(T0);
  });

  it('wakes what waits for a time in the order of its time, each step to its end before the next', async () => {
    const clocks = new TenantClocks(() => new Date(T0));
    const order: string[] = [];
    let running = 0;
    clocks.running = () => running;
    const task = async (name: string, at: number) => {
      running++;
      await clocks.until('a', at);
      // A step that takes a while (an attempt): the move waits for it before the next one.
      await new Promise((resolve) => setTimeout(resolve, 5));
      order.push(name);
      running--;
      clocks.changed('a');
    };
    const tasks = [task('third', T0 + 3 * HOUR), task('first', T0 + HOUR), task('second', T0 + 2 * HOUR)];
    const other = (async () => {
      await clocks.until('b', T0 + HOUR);
      order.push('other tenant');
    })();
    let swept = 0;
    clocks.afterMove = async () => {
      swept++;
    };
    await clocks.advance('a', 2 * HOUR);
    expect(order).toEqual(['first', 'second']);
    expect(swept).toBe(1);
    await clocks.set('a', T0 + 3 * HOUR);
    expect(order).toEqual(['first', 'second', 'third']);
    await Promise.all(tasks);
    // Another tenant's wait is untouched by these moves; closing ends it.
    clocks.close();
    await other;
    expect(order.at(-1)).toBe('other tenant');
  });

  it('refuses to go back, a bad amount and a date it cannot read, as EmulatorErrors', async () => {
    const clocks = new TenantClocks(() => new Date(T0));
    await clocks.set('a', new Date(T0 + HOUR));
    await expect(clocks.set('a', T0)).rejects.toThrow(/cannot go back/);
    await expect(clocks.set('a', 'tomorrow')).rejects.toThrow(EmulatorError);
    await expect(clocks.set('a', new Date(Number.NaN))).rejects.toThrow(/invalid Date/);
    await expect(clocks.advance('a', -1)).rejects.toThrow(EmulatorError);
    await expect(clocks.advance('a', Number.POSITIVE_INFINITY)).rejects.toThrow(/0 or more/);
    await clocks.set('a', '2030-01-01T00:00:00Z');
    expect(clocks.now('a').toISOString()).toBe('2030-01-01T00:00:00.000Z');
  });

  it('refuses a move past the last time a Date can hold, and the clock stays where it was', async () => {
    const clocks = new TenantClocks(() => new Date(T0));
    await expect(clocks.advance('a', 1e16)).rejects.toThrow(EmulatorError);
    await expect(clocks.advance('a', 8.64e15 - T0)).rejects.toThrow(/cannot go past/);
    await expect(clocks.set('a', 8.64e15 + 1)).rejects.toThrow(/cannot go past/);
    await expect(clocks.set('a', '+275760-09-13T00:00:00Z')).rejects.toThrow(EmulatorError);
    expect(clocks.ms('a')).toBe(T0);
    expect(clocks.now('a').toISOString()).toBe(new Date(T0).toISOString());
    // Far ahead but within the range: accepted, and the time is still a valid Date.
    await clocks.set('a', '9999-12-31T00:00:00Z');
    expect(clocks.now('a').toISOString()).toBe('9999-12-31T00:00:00.000Z');
  });

  it('resolves a wait for a time already reached at once, and one due on real time by its timer', async () => {
    const clocks = new TenantClocks();
    await clocks.until('a', Date.now() - 1);
    await clocks.until('a', Date.now() + 20);
    // Moved meanwhile: the timer is armed again for the time left on the moved clock.
    const waiting = clocks.until('a', Date.now() + HOUR);
    await clocks.advance('a', HOUR - 50);
    await waiting;
  });
});
