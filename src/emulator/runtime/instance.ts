import type { SandboxWorker } from './sandbox-worker.js';
import type { InvokeOptions, InvokeResult, LoadSpec } from './types.js';

/** How an instance gets another worker with its code loaded (from the runtime's spares). */
export type WorkerFactory = () => Promise<SandboxWorker>;

interface Slot {
  worker: SandboxWorker;
  busy: boolean;
  idleTimer?: NodeJS.Timeout | undefined;
}

/**
 * One loaded code version and its workers. Hot concurrency is 1: one warm worker; calls that
 * arrive while every worker is busy start further workers (up to `maxWorkers`) instead of
 * queueing, and the extra workers are stopped after `idleMs` without work.
 */
export class Instance {
  private readonly slots: Slot[] = [];
  private readonly waiting: { resolve: (slot: Slot) => void; reject: (error: unknown) => void }[] = [];
  private starting = 0;
  private inFlight = 0;
  private retired = false;
  private drained: (() => void) | undefined;

  constructor(
    readonly spec: LoadSpec,
    first: SandboxWorker,
    private readonly spawn: WorkerFactory,
    private readonly options: { maxWorkers: number; idleMs: number },
  ) {
    this.slots.push({ worker: first, busy: false });
  }

  get id(): string {
    return this.spec.id;
  }

  get version(): string | number {
    return this.spec.version;
  }

  /** Workers running this code now (for tests and the dashboard). */
  get workerCount(): number {
    return this.slots.length;
  }

  /** Runs the code once with `{ args, configuration }` (and `svc`), in a worker of its own. */
  async invoke(input: { args: unknown; configuration: unknown }, options: InvokeOptions): Promise<InvokeResult> {
    if (this.retired) throw new Error(`instance ${this.spec.id}@${this.spec.version} is retired`);
    const payload = JSON.stringify({ args: input.args ?? null, configuration: input.configuration ?? {} });
    this.inFlight++;
    try {
      const slot = await this.acquire();
      const started = performance.now();
      try {
        const { value, logs } = await slot.worker.invoke(payload, {
          instance: this.spec.id,
          timeoutMs: options.timeoutMs,
          requestId: options.requestId,
          svc: options.svc ?? null,
        });
        return { value: JSON.parse(value) as unknown, logs, ms: performance.now() - started };
      } finally {
        this.release(slot);
      }
    } finally {
      this.inFlight--;
      if (this.inFlight === 0) this.drained?.();
    }
  }

  /** Stops taking calls; lets the calls in flight finish on these workers, then stops them. */
  async retire(): Promise<void> {
    this.retired = true;
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    // Take them all out first: stop() removes a slot from the list it would be iterating.
    const slots = this.slots.splice(0);
    await Promise.all(slots.map((slot) => this.stop(slot)));
  }

  private async acquire(): Promise<Slot> {
    this.prune();
    const idle = this.slots.find((slot) => !slot.busy);
    if (idle) return this.take(idle);
    if (this.slots.length + this.starting < this.options.maxWorkers) {
      this.starting++;
      try {
        const slot: Slot = { worker: await this.spawn(), busy: false };
        this.slots.push(slot);
        return this.take(slot);
      } finally {
        this.starting--;
      }
    }
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  private take(slot: Slot): Slot {
    clearTimeout(slot.idleTimer);
    slot.idleTimer = undefined;
    slot.busy = true;
    return slot;
  }

  private release(slot: Slot): void {
    slot.busy = false;
    if (slot.worker.dead) {
      this.prune();
      // A waiter whose worker died (a timeout) gets a fresh one rather than waiting forever,
      // or the reason none could be started.
      const next = this.waiting.shift();
      if (next) this.acquire().then(next.resolve, next.reject);
      return;
    }
    const next = this.waiting.shift();
    if (next) return next.resolve(this.take(slot));
    if (this.retired) return;
    // The first worker stays warm; extras go after a quiet spell.
    if (this.slots.indexOf(slot) > 0) {
      slot.idleTimer = setTimeout(() => {
        if (!slot.busy && this.slots.length > 1) void this.stop(slot);
      }, this.options.idleMs);
      slot.idleTimer.unref();
    }
  }

  private prune(): void {
    for (let i = this.slots.length - 1; i >= 0; i--) if (this.slots[i]!.worker.dead) this.slots.splice(i, 1);
  }

  private async stop(slot: Slot): Promise<void> {
    clearTimeout(slot.idleTimer);
    const at = this.slots.indexOf(slot);
    if (at >= 0) this.slots.splice(at, 1);
    await slot.worker.terminate();
  }
}
