import { UserCodeError } from './user-code-error.js';
import type { SandboxGroup } from './sandbox-group.js';
import type { InvokeOptions, InvokeResult, LoadSpec } from './types.js';

/**
 * One loaded code version. It runs in its owner's sandbox processes (loaded into a second one only
 * when a call goes there); retiring it lets the calls in flight finish, then unloads it everywhere.
 */
export class Instance {
  private inFlight = 0;
  private retired = false;
  /** The version that replaced this one: a call that took this instance before the swap runs there. */
  private successor: Instance | undefined;
  private drained: (() => void) | undefined;

  constructor(
    readonly spec: LoadSpec,
    /** The version's key inside sandbox processes: unique per Instance. */
    readonly vid: string,
    private readonly pool: SandboxGroup,
    /** Told once the version is unloaded (RuntimeHost.retired). */
    private readonly gone?: (id: string, version: string | number) => void,
  ) {}

  get id(): string {
    return this.spec.id;
  }

  get version(): string | number {
    return this.spec.version;
  }

  get label(): string {
    return this.spec.label ?? this.spec.filename;
  }

  /** Sandbox processes this version is loaded in now (for tests and the dashboard). */
  get processCount(): number {
    return this.pool.processesWith(this.vid);
  }

  /** Runs the code once with `{ args, configuration }` (and `svc`). */
  async invoke(input: { args: unknown; configuration: unknown }, options: InvokeOptions): Promise<InvokeResult> {
    if (this.retired) {
      if (this.successor) return this.successor.invoke(input, options);
      throw new UserCodeError(409, `${this.label} was unloaded (deleted) before this call began.`, {
        title: 'Code unloaded',
      });
    }
    const payload = { args: input.args ?? null, configuration: input.configuration ?? {} };
    this.inFlight++;
    try {
      const started = performance.now();
      const { value, logs } = await this.pool.run(this, payload, options);
      return { value, logs, ms: performance.now() - started };
    } finally {
      this.inFlight--;
      if (this.inFlight === 0) this.drained?.();
    }
  }

  /** Stops taking calls and ends those in flight with a 409 saying `deleted` was deleted; unloads the code. */
  end(deleted: string): void {
    this.retired = true;
    this.successor = undefined;
    this.pool.end(
      this.vid,
      new UserCodeError(409, `${capitalized(deleted)} was deleted while this call ran; the call was stopped.`, {
        title: 'Deleted',
      }),
    );
    this.drained?.();
    this.gone?.(this.id, this.version);
  }

  /** Stops taking calls (new ones go to `successor`); lets the calls in flight finish, then unloads the code. */
  async retire(successor?: Instance): Promise<void> {
    this.retired = true;
    this.successor = successor;
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    this.pool.unload(this.vid);
    this.gone?.(this.id, this.version);
  }
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * A load that lost to an unload of its id (a DELETE while a PUT, a PATCH or a first call loaded
 * the code): the code's owner is gone, which the service says in its own terms (a 404).
 */
export class UnloadedWhileLoading extends Error {
  override readonly name = 'UnloadedWhileLoading';

  constructor(
    readonly id: string,
    version: string | number,
  ) {
    super(`${id} was unloaded while ${String(version)} loaded`);
  }
}
