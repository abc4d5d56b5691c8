/**
 * The background work of each tenant (asynchronous invocations, their webhook deliveries and the
 * retries of those), so that a test can wait until its tenant has nothing left running
 * (`svc/testing`'s `t.settle()`) without sleeping or polling.
 */
export class PendingWork {
  private readonly byTenant = new Map<string, Set<Promise<unknown>>>();
  /** Told each time a task of a tenant ends (the tenant's clock may be waiting for it). */
  onEnd: (tenantId: string) => void = () => {};

  /** Counts `task` as the tenant's until it ends (either way); returns it. */
  track<T extends Promise<unknown>>(tenantId: string, task: T): T {
    let tasks = this.byTenant.get(tenantId);
    if (!tasks) this.byTenant.set(tenantId, (tasks = new Set()));
    const running = tasks;
    const done = task.then(
      () => undefined,
      () => undefined,
    );
    running.add(done);
    void done.then(() => {
      running.delete(done);
      if (running.size === 0 && this.byTenant.get(tenantId) === running) this.byTenant.delete(tenantId);
      this.onEnd(tenantId);
    });
    return task;
  }

  /** How many tasks of the tenant are under way. */
  count(tenantId: string): number {
    return this.byTenant.get(tenantId)?.size ?? 0;
  }

  /**
   * Resolves once the tenant has no task under way, work that tasks start meanwhile (a retry, a
   * delivery after its run) included.
   */
  async settled(tenantId: string): Promise<void> {
    for (let tasks = this.byTenant.get(tenantId); tasks && tasks.size > 0; tasks = this.byTenant.get(tenantId))
      await Promise.all([...tasks]);
  }
}
