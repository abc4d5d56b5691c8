import { UserCodeError } from './user-code-error.js';
import type { Instance } from './instance.js';
import { BUSY, type SandboxProcess } from './sandbox-process.js';
import type { InvokeOptions, LogEntry } from './types.js';

/** What a group needs of the runtime: processes (within the global budget) and the version cap. */
export interface ProcessSource {
  /** A booted process; an `extra` one (beyond the group's first) only if the budget has room now. */
  start(group: SandboxGroup, extra: boolean): Promise<SandboxProcess | undefined>;
  /** A call ended: a process may have become idle. */
  released(): void;
  readonly maxProcessesPerGroup: number;
  readonly maxVersionsPerProcess: number;
  readonly idleMs: number;
  readonly keepWarmMs: number;
  /** How long an owner's first process stays once its owner is gone (RuntimeWindows.ownerGoneMs). */
  readonly ownerGoneMs: number;
}

/**
 * The sandbox processes of one tenant (or, with `isolation: 'owner'`, of one code owner), and the
 * versions of its code as it is saved, each in a Compartment of its own. No process ever runs two
 * tenants' code; what one owner of a tenant can still reach of another in a shared process is in
 * docs/sandbox.md. The first process takes every call; a second starts only when the first is held
 * by code that does not yield (a CPU-bound call) and the budget has room, so I/O-bound concurrency
 * costs no extra process. Extras are stopped after `idleMs` without calls.
 */
export class SandboxGroup {
  readonly processes: SandboxProcess[] = [];
  private starting: Promise<SandboxProcess | undefined> | undefined;
  private readonly reapers = new Map<SandboxProcess, NodeJS.Timeout>();

  constructor(
    /** What the group's processes are for: `tenant`, or `tenant/owner`. */
    readonly key: string,
    readonly tenant: string,
    private readonly source: ProcessSource,
  ) {}

  /**
   * A process to load new code into: one that answers (not one held by the old version's loop,
   * which would be blamed for the new code's load), started if need be.
   */
  async primary(): Promise<SandboxProcess> {
    const alive = this.processes.filter((process) => !process.dead);
    const ready = alive.find((process) => process.responsive);
    if (ready) return ready;
    const started = alive.length < this.source.maxProcessesPerGroup ? await this.start() : undefined;
    return started ?? alive[0] ?? this.primary();
  }

  /** The owner is gone: its processes go once their calls are done. */
  stop(): void {
    for (const process of this.processes) {
      if (process.calls.size === 0) process.kill('its code was unloaded');
      else this.scheduleReap(process, true);
    }
  }

  processesWith(vid: string): number {
    return this.processes.filter((process) => !process.dead && process.has(vid)).length;
  }

  /** Runs one call of `instance`, loading its version into the chosen process if need be. */
  async run(
    instance: Instance,
    payload: { args: unknown; configuration: unknown },
    options: InvokeOptions,
  ): Promise<{ value: unknown; logs: LogEntry[] }> {
    const invokeOptions = {
      label: instance.label,
      timeoutMs: options.timeoutMs,
      requestId: options.requestId,
      svc: options.svc ?? null,
      clockOffsetMs: options.clockOffsetMs,
    };
    for (let attempt = 0; ; attempt++) {
      // Most calls find a process that answers with their version loaded: no await (a turn of the
      // microtask queue each, on the path of every call) on the way to it.
      const process = this.answering() ?? (await this.pick());
      this.keep(process);
      let outcome: Promise<{ value: unknown; logs: LogEntry[] } | typeof BUSY>;
      if (process.loaded(instance.vid)) outcome = process.invoke(instance.vid, payload, invokeOptions);
      else {
        const unpin = process.pin(instance.vid);
        try {
          const { code, filename, sourceUrl } = instance.spec;
          await process.load(instance.vid, instance.id, code, filename, sourceUrl);
          outcome = process.invoke(instance.vid, payload, invokeOptions);
        } catch (error) {
          // The process went away under the load: try another. Else the code no longer loads here.
          if (process.dead && attempt < 2) continue;
          throw new UserCodeError(
            500,
            `The sandbox could not load ${instance.label} again: ${(error as UserCodeError).detail ?? (error as Error).message}`,
            { title: 'Sandbox stopped' },
          );
        } finally {
          unpin();
        }
      }
      process.trim(this.source.maxVersionsPerProcess);
      let settled: { value: unknown; logs: LogEntry[] } | typeof BUSY;
      try {
        settled = await outcome;
      } finally {
        this.scheduleReap(process);
        this.source.released();
      }
      if (settled !== BUSY) return settled;
      if (attempt >= 2)
        throw new UserCodeError(
          500,
          `The sandbox processes of ${instance.label} stayed busy with work left running by earlier calls.`,
          { title: 'Sandbox stopped' },
        );
    }
  }

  unload(vid: string): void {
    for (const process of this.processes) process.unload(vid);
  }

  /** Ends the version's calls in flight with `error`, then unloads it. */
  end(vid: string, error: UserCodeError): void {
    for (const process of this.processes) {
      process.endCalls(vid, error);
      process.unload(vid);
    }
  }

  forget(process: SandboxProcess): void {
    const at = this.processes.indexOf(process);
    if (at >= 0) this.processes.splice(at, 1);
    clearTimeout(this.reapers.get(process));
    this.reapers.delete(process);
  }

  /** Idle: may be stopped to make room for another group (its code is loaded again on its next call). */
  isSpareable(process: SandboxProcess): boolean {
    return process.calls.size === 0 && !process.preparing;
  }

  /** The first process that answers: a second one takes calls only while the first is held, and goes idle after. */
  private answering(): SandboxProcess | undefined {
    for (const process of this.processes) if (!process.dead && process.responsive) return process;
    return undefined;
  }

  private async pick(): Promise<SandboxProcess> {
    const alive = this.processes.filter((process) => !process.dead);
    const ready = this.answering();
    if (ready) return ready;
    const started = alive.length < this.source.maxProcessesPerGroup ? await this.start() : undefined;
    if (started) return started;
    // Every process is held and no other may start: queue behind the one with the fewest calls
    // (the call's timeout runs meanwhile, and a call that never got to run says so: a 503).
    return alive.sort((a, b) => a.calls.size - b.calls.size)[0] ?? this.pick();
  }

  /** A new process: the group's first always; an extra one only if the budget has room now. */
  private start(): Promise<SandboxProcess | undefined> {
    const extra = this.processes.some((process) => !process.dead);
    this.starting ??= this.source
      .start(this, extra)
      .then((process) => {
        if (process) this.processes.push(process);
        return process;
      })
      .finally(() => (this.starting = undefined));
    return this.starting;
  }

  private keep(process: SandboxProcess): void {
    clearTimeout(this.reapers.get(process));
    this.reapers.delete(process);
  }

  /**
   * An extra process goes after `idleMs` without calls; the first stays warm `keepWarmMs` (its
   * memory then goes back to the budget, process-budget.ts), or 1 s once the owner is gone.
   */
  private scheduleReap(process: SandboxProcess, evenFirst = false): void {
    if (process.dead || (process.calls.size > 0 && !evenFirst)) return;
    this.keep(process);
    const first = this.processes.indexOf(process) <= 0;
    const timer = setTimeout(
      () => {
        this.reapers.delete(process);
        if (process.calls.size > 0 || process.preparing) return this.scheduleReap(process, evenFirst);
        process.kill('it was idle');
      },
      evenFirst ? this.source.ownerGoneMs : first ? this.source.keepWarmMs : this.source.idleMs,
    );
    timer.unref();
    this.reapers.set(process, timer);
  }
}
