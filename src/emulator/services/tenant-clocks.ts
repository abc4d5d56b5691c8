import { EmulatorError } from '../errors.js';

/** The emulator's clock (`options.clock`): real time unless a test gives its own. */
export type Clock = () => Date;

/**
 * One tenant's clock (`emulator.tenants.clock(id)`). Everything time does in the tenant reads it:
 * the expiry of Applications, tokens, transactions and results, webhook retry backoff, `Date` in
 * its reactors and transforms, the time of its events. It only moves forward, and lives in memory
 * (a restart is back on real time); the emulator's own timers and every other tenant are untouched.
 */
export interface TenantClock {
  /** The tenant's time now. */
  now(): Date;
  /**
   * Moves the clock forward by `ms` and runs the work that falls due (webhook retries, in order of
   * their time, each to its end; then what expired is swept); resolves once it has run.
   */
  advance(ms: number): Promise<void>;
  /** Sets the clock to `to` (a Date, an ISO 8601 string or epoch ms), as advance does; an earlier time is refused. */
  set(to: Date | string | number): Promise<void>;
}

/**
 * The latest time a tenant's clock may be moved to: a year before the last time a Date can hold
 * (8.64e15 ms, +275760-09-13), so that real time can go on from there. Past the last one, every
 * `new Date()` of the tenant (its events' times, its records' stamps) would be an invalid Date.
 */
export const LATEST_CLOCK_MS = 8.64e15 - 365 * 86_400_000;

/** The largest delay setTimeout accepts (~24.8 days); a later wake is re-armed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Work of a tenant waiting for a time of the tenant's clock (a webhook's retry). */
interface Waiting {
  at: number;
  timer: NodeJS.Timeout | undefined;
  wake: () => void;
}

/**
 * Each tenant's clock: the emulator's clock (real time, or `options.clock`) plus an offset the
 * tenant's clock was moved by, 0 for every tenant whose clock was never moved (svc/testing's
 * `t.clock`). Everything time does in a tenant reads it: the expiry of its Applications, tokens,
 * transactions and results, the backoff of its webhook retries, and `Date` in its user code (the
 * offset goes with each call). A clock only moves forward; offsets live in memory only (a restart
 * is back on the emulator's clock).
 *
 * Work waiting for a time of a tenant's clock (`until`) wakes when that time comes, by real time
 * passing or by the clock being moved: moving runs what falls due in order of its time, each step
 * to its end (`running` counts the tenant's work under way), then `afterMove` (the sweep).
 */
export class TenantClocks {
  private readonly offsets = new Map<string, number>();
  private readonly waiting = new Map<string, Set<Waiting>>();
  /** The moves of each tenant's clock, one after the other. */
  private readonly moving = new Map<string, Promise<void>>();
  /** Told when a tenant's work may have changed from running to waiting or ended. */
  private readonly watchers = new Map<string, Set<() => void>>();
  private readonly base: () => number;
  private closed = false;
  /** Run once a moved clock's due work has run: what expired is swept. */
  afterMove: () => Promise<void> = async () => {};
  /** How many tasks of the tenant are under way, waiting ones included (PendingWork). */
  running: (tenantId: string) => number = () => 0;

  constructor(clock?: Clock) {
    this.base = clock ? () => clock().getTime() : Date.now;
  }

  /** The tenant's time in epoch milliseconds. */
  ms(tenantId: string): number {
    const offset = this.offsets.get(tenantId);
    return offset === undefined ? this.base() : this.base() + offset;
  }

  /** Every tenant's time (epoch ms) at one instant: what a sweep over every record reads. */
  snapshot(): (tenantId: string) => number {
    const base = this.base();
    if (this.offsets.size === 0) return () => base;
    return (tenantId) => base + (this.offsets.get(tenantId) ?? 0);
  }

  /** The tenant's time. */
  now(tenantId: string): Date {
    return new Date(this.ms(tenantId));
  }

  /** The emulator's time: a new tenant's, and every tenant's whose clock never moved. */
  emulatorNow(): Date {
    return new Date(this.base());
  }

  /** How far the tenant's clock was moved ahead of the emulator's, in milliseconds (0: never moved). */
  offset(tenantId: string): number {
    return this.offsets.get(tenantId) ?? 0;
  }

  /** Resolves once the tenant's time reaches `at` (epoch ms), whichever way it gets there; at once once closed. */
  until(tenantId: string, at: number): Promise<void> {
    if (this.closed || !(at > this.ms(tenantId))) return Promise.resolve();
    return new Promise((resolve) => {
      let entries = this.waiting.get(tenantId);
      if (!entries) this.waiting.set(tenantId, (entries = new Set()));
      const all = entries;
      const entry: Waiting = {
        at,
        timer: undefined,
        wake: () => {
          clearTimeout(entry.timer);
          all.delete(entry);
          if (all.size === 0 && this.waiting.get(tenantId) === all) this.waiting.delete(tenantId);
          resolve();
        },
      };
      all.add(entry);
      this.arm(tenantId, entry);
      this.changed(tenantId);
    });
  }

  /** Moves the tenant's clock forward by `ms` and runs the work that falls due; resolves once it has run. */
  advance(tenantId: string, ms: number): Promise<void> {
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)
      return Promise.reject(
        new EmulatorError(`A clock advances by a number of milliseconds, 0 or more (got ${describe(ms)}).`),
      );
    // Measured from once the work under way has come to rest: an attempt answered meanwhile counts
    // its backoff from its answer, which a target read before it would fall short of.
    return this.serially(tenantId, async () => {
      await this.quiet(tenantId);
      await this.moveTo(tenantId, this.ms(tenantId) + ms);
    });
  }

  /**
   * Sets the tenant's clock to `to` (a Date, ISO 8601 text or epoch ms) and runs the work that falls due. A clock does not go
   * back (what expired stays expired, what was delivered stays delivered): an earlier time is refused.
   */
  set(tenantId: string, to: Date | string | number): Promise<void> {
    const at = timeOf(to);
    if (at === undefined)
      return Promise.reject(
        new EmulatorError(
          `A clock is set to a Date, an ISO 8601 date-time string or epoch milliseconds (got ${describe(to)}).`,
        ),
      );
    return this.serially(tenantId, async () => {
      const now = this.ms(tenantId);
      if (at < now) {
        throw new EmulatorError(
          `The tenant's clock cannot go back: it is ${new Date(now).toISOString()}, and ${new Date(at).toISOString()} is earlier. Use a fresh tenant to start from an earlier time.`,
        );
      }
      await this.moveTo(tenantId, at);
    });
  }

  /** Tells the clocks that a task of the tenant ended (PendingWork): a move may be waiting for it. */
  changed(tenantId: string): void {
    const watchers = this.watchers.get(tenantId);
    if (watchers) for (const watcher of [...watchers]) watcher();
  }

  /** Forgets a deleted tenant's clock; its waits end at once (the work waiting sees the tenant gone). */
  forget(tenantId: string): void {
    this.offsets.delete(tenantId);
    for (const entry of [...(this.waiting.get(tenantId) ?? [])]) entry.wake();
  }

  /** Wakes every wait at once and waits no more (the emulator stops). */
  close(): void {
    this.closed = true;
    for (const entries of [...this.waiting.values()]) for (const entry of [...entries]) entry.wake();
    for (const watchers of [...this.watchers.values()]) for (const watcher of [...watchers]) watcher();
  }

  private async moveTo(tenantId: string, target: number): Promise<void> {
    if (!(target <= LATEST_CLOCK_MS)) {
      throw new EmulatorError(
        `A tenant's clock cannot go past ${new Date(LATEST_CLOCK_MS).toISOString()}, a year before the last time a JavaScript Date can hold (this move would take it to ${target} ms since 1970).`,
      );
    }
    for (;;) {
      await this.quiet(tenantId);
      const next = this.earliest(tenantId, target);
      if (next === undefined || this.closed) break;
      this.moveOffset(tenantId, next.at);
      next.wake();
    }
    this.moveOffset(tenantId, target);
    for (const entry of this.waiting.get(tenantId) ?? []) this.arm(tenantId, entry);
    await this.afterMove();
    await this.quiet(tenantId);
  }

  /** Sets the offset so that the tenant's time is `at`, unless it is there already (real time went on). */
  private moveOffset(tenantId: string, at: number): void {
    const base = this.base();
    if (at > base + this.offset(tenantId)) this.offsets.set(tenantId, at - base);
  }

  /** The tenant's waiting work due by `target` that comes first (the earliest asked, of those due at once). */
  private earliest(tenantId: string, target: number): Waiting | undefined {
    let first: Waiting | undefined;
    for (const entry of this.waiting.get(tenantId) ?? [])
      if (entry.at <= target && (!first || entry.at < first.at)) first = entry;
    return first;
  }

  /** Resolves once every task of the tenant has ended or waits for its time. */
  private quiet(tenantId: string): Promise<void> {
    const isQuiet = () => this.closed || this.running(tenantId) <= (this.waiting.get(tenantId)?.size ?? 0);
    if (isQuiet()) return Promise.resolve();
    return new Promise((resolve) => {
      let watchers = this.watchers.get(tenantId);
      if (!watchers) this.watchers.set(tenantId, (watchers = new Set()));
      const all = watchers;
      const watcher = () => {
        if (!isQuiet()) return;
        all.delete(watcher);
        if (all.size === 0 && this.watchers.get(tenantId) === all) this.watchers.delete(tenantId);
        resolve();
      };
      all.add(watcher);
    });
  }

  /** Wakes `entry` when real time reaches its time on the tenant's clock as it runs now. */
  private arm(tenantId: string, entry: Waiting): void {
    clearTimeout(entry.timer);
    const delay = entry.at - this.ms(tenantId);
    const capped = delay > MAX_TIMER_MS;
    entry.timer = setTimeout(
      () => (capped ? this.arm(tenantId, entry) : entry.wake()),
      Math.max(0, Math.min(delay, MAX_TIMER_MS)),
    );
    entry.timer.unref();
  }

  private serially(tenantId: string, move: () => Promise<void>): Promise<void> {
    const previous = this.moving.get(tenantId) ?? Promise.resolve();
    const next = previous.then(move);
    const kept = next.catch(() => {});
    this.moving.set(tenantId, kept);
    void kept.then(() => {
      if (this.moving.get(tenantId) === kept) this.moving.delete(tenantId);
    });
    return next;
  }
}

/** The tenants' clocks over `clock` (one clock for every tenant, as a test may give a service), or as given. */
export function tenantClocks(clock?: Clock | TenantClocks): TenantClocks {
  return clock instanceof TenantClocks ? clock : new TenantClocks(clock);
}

/** Epoch ms of a Date, an ISO 8601 string or a number; undefined when it is none or no valid time. */
function timeOf(to: unknown): number | undefined {
  const ms =
    to instanceof Date
      ? to.getTime()
      : typeof to === 'number'
        ? to
        : typeof to === 'string' && /^\d{4}-\d{2}-\d{2}/.test(to)
          ? Date.parse(to)
          : Number.NaN;
  return Number.isFinite(ms) ? ms : undefined;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  if (value instanceof Date) return 'an invalid Date';
  return typeof value === 'number' ? String(value) : value === null ? 'null' : typeof value;
}
