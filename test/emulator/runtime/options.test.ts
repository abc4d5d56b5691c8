import { describe, expect, it } from 'vitest';
import { DEFAULT_WINDOWS, resolveOptions } from '../../../src/emulator/runtime/options.js';

describe("the runtime's watch windows", () => {
  it('are the defaults where none is asked for, and a window asked for replaces only its own', () => {
    expect(resolveOptions({}).windows).toEqual(DEFAULT_WINDOWS);
    expect(resolveOptions({ windows: { busyForMs: 250 } }).windows).toEqual({ ...DEFAULT_WINDOWS, busyForMs: 250 });
    expect(DEFAULT_WINDOWS).toMatchObject({ busyForMs: 1000, stuckMs: 1000, idleTickMs: 1000, activeTickMs: 50 });
  });

  it('refuse a name that is no window and a length that is not a positive number, saying which', () => {
    expect(() => resolveOptions({ windows: { busyMs: 5 } as never })).toThrow(
      /^runtime\.windows\.busyMs is not a window: busyForMs, stuckMs, /,
    );
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '100'])
      expect(() => resolveOptions({ windows: { stuckMs: bad as never } })).toThrow(
        `runtime.windows.stuckMs must be a positive number of milliseconds (got ${String(bad)})`,
      );
  });
});
