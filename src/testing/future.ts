/**
 * What a tenant will have once the emulator's per-tenant clock exists (issue 28, item 5): the
 * object is here so that tests can name it, and each method says it is not there yet rather than
 * act as if it were.
 */
function notYet(what: string): never {
  throw new Error(`svc/testing: ${what} is not available yet in this version of svc.`);
}

/** The tenant's clock: real time (moving it comes with the per-tenant clock). */
export class TenantClock {
  /** The tenant's time now. */
  now(): Date {
    return new Date();
  }

  /** Moves the tenant's time forward ('25h', '30m', '10s' or milliseconds). */
  advance(_by: string | number): Promise<void> {
    return notYet('t.clock.advance()');
  }

  /** Sets the tenant's time. */
  set(_to: Date | string | number): Promise<void> {
    return notYet('t.clock.set()');
  }
}
