/**
 * Closing what was opened, in reverse: each resource registers its own close as it opens, and
 * `run` (on dispose, or when a start fails half-way) closes the last opened first. A close that
 * fails does not keep the others from running; the first failure is thrown once all have run.
 */
export class Teardown {
  private readonly steps: (() => unknown)[] = [];

  /** Registers `close` to run before everything registered earlier. */
  push(close: () => unknown): void {
    this.steps.push(close);
  }

  /** Runs every registered close, last first, each once; later calls run what was pushed since. */
  async run(): Promise<void> {
    let failure: { error: unknown } | undefined;
    for (let close = this.steps.pop(); close !== undefined; close = this.steps.pop()) {
      try {
        await close();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }
}
