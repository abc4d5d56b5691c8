import type { TenantClock as EmulatorClock } from '../emulator/index.js';

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;

/**
 * The tenant's clock, real time until a test moves it: `advance('25h')` and `set(date)` move this
 * tenant's time only (its expiries, webhook retries, `Date` in its code, its events' times), never
 * the test process's timers nor another tenant's. A clock only goes forward.
 */
export class TenantClock {
  constructor(private readonly clock: EmulatorClock) {}

  /** The tenant's time now. */
  now(): Date {
    return this.clock.now();
  }

  /**
   * Moves the tenant's time forward by `by` ('500ms', '30s', '10m', '25h', '2d', '1h30m', or
   * milliseconds) and runs what falls due meanwhile, in order (webhook retries delivered, expired
   * records swept); resolves once it has run.
   */
  async advance(by: string | number): Promise<void> {
    await this.clock.advance(durationMs(by));
  }

  /**
   * Sets the tenant's time to `to` (a Date, an ISO 8601 string or epoch milliseconds) and runs what
   * falls due, as `advance` does. An earlier time than the tenant's now is refused: what expired or
   * was delivered cannot be undone (a fresh tenant starts at today).
   */
  async set(to: Date | string | number): Promise<void> {
    await this.clock.set(to);
  }
}

/** A clock advances by less than this: the span of a JavaScript Date from 1970 (100,000,000 days). */
const DATE_SPAN_MS = 8.64e15;

/** Milliseconds of a duration: a number, or text such as '25h', '1h30m', '500ms'. */
export function durationMs(by: string | number): number {
  const ms = parse(by);
  if (!(ms < DATE_SPAN_MS)) {
    throw new TypeError(
      `svc/testing: t.clock.advance() takes a duration shorter than 100000000d (8.64e15 ms, the span of a JavaScript Date); got ${shown(by)}.`,
    );
  }
  return ms;
}

function parse(by: string | number): number {
  if (typeof by === 'number' && Number.isFinite(by) && by >= 0) return by;
  const text = typeof by === 'string' ? by.replace(/\s+/g, '') : '';
  if (!DURATION.test(text)) {
    throw new TypeError(
      `svc/testing: t.clock.advance() takes a duration such as '25h', '30m', '1h30m', '2d', '500ms', or milliseconds (0 or more); got ${shown(by)}.`,
    );
  }
  let ms = 0;
  for (const [, amount, unit] of text.matchAll(PART)) ms += Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
  return ms;
}

function shown(by: unknown): string {
  if (typeof by !== 'string') return String(by);
  return JSON.stringify(by.length > 40 ? `${by.slice(0, 40)}...` : by);
}
