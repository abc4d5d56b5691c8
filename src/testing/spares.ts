import type { EmulatorTenants, ForkedTenant } from '../emulator/index.js';

/** How many forks are kept ready: a test takes one at once, and the next is made while it runs. */
const SPARES = 4;

/**
 * Forks of the template made ahead, between tests (IntegreSQL's pool of clones): `take()` answers
 * one at once when it has one, and a fork is made in the background to replace it. The template
 * never changes once applied, so a spare is what a fork made now would be.
 */
export class SpareForks {
  private readonly ready: ForkedTenant[] = [];
  private filling = false;
  private stopped = false;

  constructor(
    private readonly tenants: EmulatorTenants,
    private readonly templateId: string,
  ) {}

  /** A fork of the template: a spare if one is ready, else one made now. */
  async take(): Promise<ForkedTenant> {
    const spare = this.ready.shift();
    this.fill();
    return spare ?? this.tenants.fork(this.templateId, { name: 'test' });
  }

  /** Starts making spares, after whatever runs now. */
  fill(): void {
    if (this.filling || this.stopped || this.ready.length >= SPARES) return;
    this.filling = true;
    setImmediate(() => void this.refill());
  }

  /** No more spares; those made are freed with the emulator. */
  stop(): void {
    this.stopped = true;
    this.ready.length = 0;
  }

  private async refill(): Promise<void> {
    try {
      while (!this.stopped && this.ready.length < SPARES) {
        const fork = await this.tenants.fork(this.templateId, { name: 'test' });
        if (this.stopped) return;
        this.ready.push(fork);
        // One fork per turn of the event loop: a test's own I/O is never held behind the pool.
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch {
      // The emulator is stopping: take() forks (and says so) itself.
    } finally {
      this.filling = false;
    }
  }
}
