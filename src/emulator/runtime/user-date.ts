/**
 * The `Date` a code version gets, its own: the realm's Date, but its time is the tenant's clock,
 * real time plus the offset of the call running now (svc/testing's `t.clock`, sent with each
 * call). Runs in the sandbox process: created after lockdown() and hardened, so that user code can
 * neither reach the host's working `Date` through it nor set the offset (it is read, never held).
 */

/** The host's clock and Date, taken before any user code runs. */
const HostDate = Date;
const hostNow = Date.now;

/** A `Date` whose current time is real time plus `offset()` (ms), read at each use. */
export function userDate(offset: () => number): DateConstructor {
  const now = () => hostNow() + offset();
  // A function, not a class: `Date()` called without `new` answers a string, as the realm's does.
  const TenantDate = function Date(this: unknown, ...args: unknown[]): unknown {
    if (new.target === undefined) return new HostDate(now()).toString();
    // new.target keeps subclasses (`class D extends Date`) theirs: the object gets their prototype.
    return Reflect.construct(HostDate, args.length === 0 ? [now()] : args, new.target);
  };
  Object.defineProperties(TenantDate, {
    // Every version's dates share the realm's (hardened) Date.prototype: `instanceof Date` holds across them.
    prototype: { value: HostDate.prototype, writable: false },
    length: { value: 7 },
    now: {
      value: function now() {
        return hostNow() + offset();
      },
      writable: true,
      configurable: true,
    },
    parse: { value: HostDate.parse, writable: true, configurable: true },
    UTC: { value: HostDate.UTC, writable: true, configurable: true },
  });
  return harden(TenantDate) as unknown as DateConstructor;
}

/**
 * The clock offset each version's `Date` adds: the running call's (`callOffset`), else, in its code
 * outside a call (top level, its timers), the one its last call had.
 */
export class VersionClocks {
  private readonly lastOffsets = new Map<string, number>();
  /** Whether any call came with an offset: until one does, `Date` reads real time and nothing else. */
  private moved = false;

  constructor(private readonly callOffset: () => number | undefined) {}

  /** The `Date` of version `vid`. */
  dateFor(vid: string): DateConstructor {
    return userDate(() => (this.moved ? (this.callOffset() ?? this.lastOffsets.get(vid) ?? 0) : 0));
  }

  /** A call of `vid` begins with `offset`. */
  called(vid: string, offset: number): void {
    if (offset !== 0) this.moved = true;
    if (offset !== 0 || this.lastOffsets.has(vid)) this.lastOffsets.set(vid, offset);
  }

  unloaded(vid: string): void {
    this.lastOffsets.delete(vid);
  }
}
