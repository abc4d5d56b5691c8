/** Frees a slot taken with `DeliverySlots.take`. */
export type ReleaseSlot = () => void;

interface Waiter {
  /** Order of asking, across tenants: the earliest asker whose tenant has room goes first. */
  seq: number;
  wake: (release: ReleaseSlot | undefined) => void;
}

/**
 * How many webhook attempts may be under way at once (each holds one socket): at most `total`,
 * and at most `perTenant` of one tenant, so that a tenant with many deliveries to a slow receiver
 * neither runs the emulator out of descriptors nor holds every slot. Attempts beyond wait their
 * turn in the order they asked (a delivery's retries stay in order: each waits for the one before).
 */
export class DeliverySlots {
  private running = 0;
  private readonly runningOf = new Map<string, number>();
  /** Each tenant's waiters, oldest first. */
  private readonly waiting = new Map<string, Waiter[]>();
  private seq = 0;
  private closed = false;

  constructor(
    private readonly total: number,
    private readonly perTenant: number,
  ) {}

  /** Resolves with a slot once there is room; undefined once closed (the emulator stops). */
  take(tenantId: string): Promise<ReleaseSlot | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    // Freed room is handed on at once, so whoever still waits has none: room now is this tenant's to take.
    if (this.hasRoom(tenantId)) return Promise.resolve(this.grant(tenantId));
    return new Promise((wake) => {
      const queue = this.waiting.get(tenantId) ?? [];
      queue.push({ seq: this.seq++, wake });
      this.waiting.set(tenantId, queue);
    });
  }

  /** Ends every wait (with no slot): nothing more starts. */
  close(): void {
    this.closed = true;
    for (const queue of this.waiting.values()) for (const waiter of queue) waiter.wake(undefined);
    this.waiting.clear();
  }

  /** Ends the waits of one tenant (with no slot): it was deleted. */
  drop(tenantId: string): void {
    const queue = this.waiting.get(tenantId);
    this.waiting.delete(tenantId);
    for (const waiter of queue ?? []) waiter.wake(undefined);
  }

  /** How many attempts hold a slot (all tenants, or one). */
  inUse(tenantId?: string): number {
    return tenantId === undefined ? this.running : (this.runningOf.get(tenantId) ?? 0);
  }

  private hasRoom(tenantId: string): boolean {
    return this.running < this.total && (this.runningOf.get(tenantId) ?? 0) < this.perTenant;
  }

  private grant(tenantId: string): ReleaseSlot {
    this.running++;
    this.runningOf.set(tenantId, (this.runningOf.get(tenantId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      const left = (this.runningOf.get(tenantId) ?? 1) - 1;
      if (left === 0) this.runningOf.delete(tenantId);
      else this.runningOf.set(tenantId, left);
      this.next();
    };
  }

  /** Hands freed room to the earliest waiter whose tenant is under its share. */
  private next(): void {
    while (this.running < this.total) {
      let chosen: string | undefined;
      let earliest = Number.POSITIVE_INFINITY;
      for (const [tenantId, queue] of this.waiting) {
        if (queue[0]!.seq < earliest && this.hasRoom(tenantId)) {
          chosen = tenantId;
          earliest = queue[0]!.seq;
        }
      }
      if (chosen === undefined) return;
      const queue = this.waiting.get(chosen)!;
      const waiter = queue.shift()!;
      if (queue.length === 0) this.waiting.delete(chosen);
      waiter.wake(this.grant(chosen));
    }
  }
}
