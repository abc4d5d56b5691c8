import { SandboxStoppedError } from './user-code-error.js';
import { type ResolvedOptions, resolveOptions } from './options.js';
import { Instance, UnloadedWhileLoading } from './instance.js';
import { ProcessBudget } from './process-budget.js';
import { SandboxProcess } from './sandbox-process.js';
import { SandboxGroup, type ProcessSource } from './sandbox-group.js';
import type { LoadSpec, RuntimeHost, RuntimeOptions, UserAnswer, UserRequest, UserRequestOrigin } from './types.js';
import type { OutboundOwner } from './outbound-requests.js';
import { InspectorPort, sourceUrlOf } from './inspect.js';

export { UserCodeError } from './user-code-error.js';
export { codeVersion, recordCodeVersion } from './code-version.js';
export { JsonText } from './json-text.js';
export { type Instance, UnloadedWhileLoading } from './instance.js';
export { INSPECT_HOST, freeInspectPort, inspectNotice } from './inspect.js';
export type {
  CodeSource,
  InspectOptions,
  InvokeOptions,
  InvokeResult,
  LoadSpec,
  LogEntry,
  RuntimeHost,
  RuntimeOptions,
  RuntimeWindows,
  SendUserRequest,
  SvcHandler,
  UserAnswer,
  UserRequest,
  UserRequestOrigin,
} from './types.js';
export { BUILTIN_ALLOWLIST, DEFAULT_NPM_ALLOWLIST, SVC_METHODS, type SvcMethod } from './protocol.js';
export { DEFAULT_WINDOWS } from './options.js';

const DEFAULT_TENANT = 'default';

/**
 * The sandbox runtime shared by reactors and proxy transforms. User code runs in sandbox processes
 * (sandbox-process.ts), each holding the code of one tenant (or, with `isolation: 'owner'`, of one
 * owner: a reactor, or a proxy's transforms; see sandbox-group.ts), each version in an SES
 * Compartment of its own (host.ts). `load` compiles a version in its group's process and, only once
 * it loads, makes it the current instance of its id: calls in flight finish on the old one, which is
 * then unloaded; a version that fails to load leaves the old one serving.
 *
 * The budget, shared fairly: every group may always have one process (a tenant is never made to
 * wait for another's calls); `maxProcesses` and `memoryBudgetMb` (process-budget.ts: the processes'
 * measured memory) bound the processes beyond that, and a group's extras (a second one while its
 * first is held by code that does not yield) are taken only when room is free at once, never
 * waited for. At the cap, the least recently used idle process makes room (its code loads again on
 * its next call); a group's first process idle for `keepWarmMs` is stopped, giving its memory back.
 */
export class Runtime {
  private readonly options: ResolvedOptions;
  /** A debugger may attach (RuntimeOptions.inspect): one process in all, its port held by one at a time. */
  private readonly inspect: RuntimeOptions['inspect'];
  private readonly inspectorPort = new InspectorPort();
  private readonly groups = new Map<string, SandboxGroup>();
  private readonly processes = new Set<SandboxProcess>();
  private readonly owner = new Map<SandboxProcess, SandboxGroup>();
  private readonly spares: SandboxProcess[] = [];
  private readonly instances = new Map<string, Instance>();
  /** Whose code each id is (its requests go out in its name): of the load asked for last. */
  private readonly origins = new Map<string, Omit<UserRequestOrigin, 'traceId'>>();
  private readonly loading = new Map<string, Promise<Instance>>();
  /** The load asked for last, per id: it, and no earlier one finishing later, becomes current. */
  private readonly latest = new Map<string, Promise<Instance>>();
  private readonly source: ProcessSource;
  private readonly budget: ProcessBudget;
  /** Starts waiting for room within the budget (another owner of a tenant, with `isolation: 'owner'`). */
  private readonly waiting: (() => void)[] = [];
  private disposed = false;
  private vidSeq = 0;

  constructor(
    options: RuntimeOptions = {},
    /** What the emulator lends it: where user code's `https` requests go out. */
    private readonly host: RuntimeHost = {},
  ) {
    this.options = resolveOptions(options);
    this.inspect = options.inspect;
    const { maxProcessesPerGroup, maxVersionsPerProcess, idleMs, keepWarmMs, windows } = this.options;
    this.budget = new ProcessBudget(this.options.maxProcesses, this.options.memoryBudgetMb);
    this.source = {
      start: (group, extra) => this.start(group, extra),
      released: () => this.released(),
      maxProcessesPerGroup,
      maxVersionsPerProcess,
      idleMs,
      keepWarmMs,
      ownerGoneMs: windows.ownerGoneMs,
    };
  }

  /**
   * Boots a sandbox process now rather than at the first load (`svc serve` does, so that the first
   * reactor saved loads in milliseconds; a library user or a test may not want the CPU spent).
   */
  prewarm(): void {
    this.refill(Math.max(1, this.options.spares));
  }

  /** The current instance of an id, if one is loaded. */
  get(id: string): Instance | undefined {
    return this.instances.get(id);
  }

  /**
   * The current instance of an id when it runs `version`, else undefined (load it): the one place
   * that asks whether the loaded version is current (the services give the version of the record
   * they hold), at once, so that a warm call waits no turn of the microtask queue for it.
   */
  current(id: string, version: string | number): Instance | undefined {
    const current = this.instances.get(id);
    if (current?.version !== version) return undefined;
    // With a debugger, a file svc.yaml now names otherwise is the code's URL from its next load.
    return this.inspect && current.spec.sourceUrl !== sourceUrlOf(current.spec, this.inspect) ? undefined : current;
  }

  /** Sandbox processes running now (spares included): the budget's gauge. */
  get processCount(): number {
    return this.processes.size;
  }

  /** The process ids of the sandbox processes (for tests that check they are gone). */
  get pids(): number[] {
    return [...this.processes].flatMap((process) => (process.pid === undefined ? [] : [process.pid]));
  }

  /** The processes held by code that does not yield (their probe unanswered): new calls go elsewhere. */
  get heldPids(): number[] {
    return [...this.processes].flatMap((process) =>
      process.pid !== undefined && !process.responsive ? [process.pid] : [],
    );
  }

  /**
   * Loads a code version and makes it current for its id. Loading the version already current
   * returns it as it is. Rejects with a 422 UserCodeError (file:line:column) when the code does not load.
   */
  load(given: LoadSpec): Promise<Instance> {
    const sourceUrl = sourceUrlOf(given, this.inspect);
    const spec: LoadSpec = { ...given, sourceUrl };
    const current = this.current(spec.id, spec.version);
    if (current && current.spec.code === spec.code) {
      // Asked for last, it is what stays current, whatever loads were asked for before.
      this.latest.set(spec.id, Promise.resolve(current));
      return Promise.resolve(current);
    }
    this.origins.set(spec.id, {
      tenantId: spec.tenant ?? DEFAULT_TENANT,
      // A proxy's transforms are grouped under the proxy; a reactor is its own group.
      kind: spec.group !== undefined && spec.group !== spec.id ? 'transform' : 'reactor',
      id: spec.id,
      name: spec.label ?? spec.filename,
    });
    const key = `${spec.id}\u0000${spec.version}\u0000${sourceUrl ?? ''}`;
    const inProgress = this.loading.get(key);
    if (inProgress) {
      this.latest.set(spec.id, inProgress);
      return inProgress;
    }
    const promise: Promise<Instance> = this.compile(spec, () => this.latest.get(spec.id) === promise).finally(() =>
      this.loading.delete(key),
    );
    this.loading.set(key, promise);
    this.latest.set(spec.id, promise);
    return promise;
  }

  /**
   * Stops an id's instance. Given `deleted` (what was deleted: "reactor charge"), at once: its calls
   * in flight end with a problem saying so, rather than hold the delete. Otherwise (a transform
   * dropped by an update) its calls in flight finish first. The last instance of a group stops its
   * processes.
   */
  async unload(id: string, deleted?: string): Promise<void> {
    const instance = this.instances.get(id);
    this.instances.delete(id);
    this.latest.delete(id);
    if (!instance) return;
    if (deleted === undefined) await instance.retire();
    else instance.end(deleted);
    // Its calls are over; unless loaded again meanwhile, its requests have no origin left.
    if (!this.instances.has(id) && !this.latest.has(id)) this.origins.delete(id);
    const key = this.groupKey(instance.spec);
    if (
      [...this.instances.values()].some((other) => this.groupKey(other.spec) === key) ||
      [...this.loading.keys()].some((loading) => loading.startsWith(`${id}\u0000`))
    )
      return;
    const group = this.groups.get(key);
    this.groups.delete(key);
    group?.stop();
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const instances = [...this.instances.values()];
    this.instances.clear();
    // Calls still running are stopped, not waited for: the emulator gave them its grace before this
    // (a call that never ends would hold the stop until its own timeout, up to 210 s).
    const retired = Promise.all(instances.map((instance) => instance.retire()));
    for (const process of this.processes) process.kill('the emulator stopped');
    this.processes.clear();
    this.released();
    await retired;
  }

  private async compile(spec: LoadSpec, isLatest: () => boolean): Promise<Instance> {
    const pool = this.groupOf(spec);
    const vid = `${spec.id}@${spec.version}#${++this.vidSeq}`;
    let process = await pool.primary();
    try {
      await process.load(vid, spec.id, spec.code, spec.filename, spec.sourceUrl);
    } catch (error) {
      // The process was stopped under the load for a reason of its own (work an old version left
      // running): once more, in a fresh one.
      if (!(error instanceof SandboxStoppedError)) throw error;
      process = await pool.primary();
      await process.load(vid, spec.id, spec.code, spec.filename, spec.sourceUrl);
    }
    process.trim(this.options.maxVersionsPerProcess);
    if (this.disposed) {
      process.unload(vid);
      throw new Error('the runtime is disposed');
    }
    if (!isLatest()) {
      // A newer version was asked for while this one loaded: that one decides what is current.
      process.unload(vid);
      return this.latest.get(spec.id) ?? Promise.reject(new UnloadedWhileLoading(spec.id, spec.version));
    }
    const instance = new Instance(spec, vid, pool, this.host.retired);
    const previous = this.instances.get(spec.id);
    this.instances.set(spec.id, instance);
    if (previous) void previous.retire(instance);
    return instance;
  }

  /** The group a version's processes belong to: its tenant's, or with `isolation: 'owner'` its owner's. */
  private groupKey(spec: LoadSpec): string {
    const tenant = spec.tenant ?? DEFAULT_TENANT;
    return this.options.isolation === 'owner' ? `${tenant}/${spec.group ?? spec.id}` : tenant;
  }

  private groupOf(spec: LoadSpec): SandboxGroup {
    const key = this.groupKey(spec);
    let group = this.groups.get(key);
    if (!group) this.groups.set(key, (group = new SandboxGroup(key, spec.tenant ?? DEFAULT_TENANT, this.source)));
    return group;
  }

  /**
   * A booted process for `group`: a spare if one is ready, else a new one. A tenant's first process
   * is never refused nor made to wait (no tenant waits for another's calls); an `extra` one is
   * started only if the budget has room now, else undefined (the group queues on what it has).
   */
  private async start(group: SandboxGroup, extra: boolean): Promise<SandboxProcess | undefined> {
    if (this.disposed) throw new Error('the runtime is disposed');
    let process = this.spares.shift();
    if (!process || process.dead) process = await this.spawnWithinBudget(group, extra);
    if (!process) return undefined;
    this.owner.set(process, group);
    this.refill(this.options.spares);
    await process.booted;
    return process;
  }

  /**
   * A new process, within the budget: at the cap the least recently used idle process of another
   * group makes room for a group's first process (an extra one takes only a spare). Else a tenant's first process goes over the cap (the cap holds again as groups
   * go idle and make room); an extra one is not started; and with `isolation: 'owner'`, another
   * owner of a tenant that has a process waits for room (its tenant's own calls end, at the latest
   * at their timeouts). The check and the spawn are one turn, so starts under way cannot overshoot.
   */
  private async spawnWithinBudget(group: SandboxGroup, extra: boolean): Promise<SandboxProcess | undefined> {
    for (;;) {
      // With a debugger, a process that went has exited first: its inspector's port is free.
      if (this.inspect) await this.inspectorPort.settled();
      if (this.disposed) throw new Error('the runtime is disposed');
      if (this.budget.hasRoom(this.processes)) return this.spawnFor(group);
      const idle = [...this.processes]
        .filter((process) => {
          if (process.dead) return false;
          if (this.spares.includes(process)) return true;
          // An extra process takes a spare or room there is: it never stops another group's process
          // (a tenant whose calls hold its process would stop other tenants' warm ones, again and again).
          if (extra) return false;
          const owner = this.owner.get(process);
          return owner !== undefined && owner !== group && owner.isSpareable(process);
        })
        .sort((a, b) => a.lastUsed - b.lastUsed)[0];
      if (idle) {
        idle.kill('it made room for other code');
        // With a debugger, the next one waits for the port (above).
        if (this.inspect) continue;
        return this.spawnFor(group);
      }
      if (extra) return undefined;
      // With a debugger, never a second process: another tenant's calls wait for room.
      if (!this.inspect && !this.holdsProcess(group.tenant)) return this.spawnFor(group);
      // Woken when a call ends or a process goes; a process only booting or loading becomes idle
      // without either, so look again after a while in any case.
      await new Promise<void>((resolve) => {
        this.waiting.push(resolve);
        setTimeout(resolve, 50).unref();
      });
    }
  }

  /** A new process, its group known at once (the next decision of the budget counts it as the group's). */
  private spawnFor(group: SandboxGroup): SandboxProcess {
    const process = this.spawn();
    this.owner.set(process, group);
    return process;
  }

  /** Whether a tenant has a sandbox process (of any of its groups). */
  private holdsProcess(tenant: string): boolean {
    for (const [process, group] of this.owner) if (group.tenant === tenant && !process.dead) return true;
    return false;
  }

  /** A call ended or a process went: whoever waits for room looks again. */
  private released(): void {
    for (const wake of this.waiting.splice(0)) wake();
  }

  private spawn(): SandboxProcess {
    const { projectDir, npmAllowlist, maxSvcInFlight, maxResultBytes, memoryMb, loadTimeoutMs } = this.options;
    const { maxLogBytes, maxLogLines, strayLogLinesPerSecond, windows } = this.options;
    const logLimits = { maxLogBytes, maxLogLines, strayLogLinesPerSecond };
    const inspecting = this.inspect !== undefined;
    const { busyForMs, leftWorkGraceMs } = windows;
    const process = new SandboxProcess(
      {
        ...{ projectDir, npmAllowlist: [...npmAllowlist], ...logLimits, maxSvcInFlight, maxResultBytes },
        ...{ inspecting, busyForMs, leftWorkGraceMs },
      },
      {
        memoryMb,
        windows,
        loadTimeoutMs,
        ...logLimits,
        maxResultBytes,
        maxSvcInFlight,
        inspectPort: this.inspect?.port,
      },
      this.options.onLog,
      (dead) => {
        if (inspecting) this.inspectorPort.released(dead.exited);
        this.processes.delete(dead);
        this.owner.get(dead)?.forget(dead);
        this.owner.delete(dead);
        const spare = this.spares.indexOf(dead);
        if (spare >= 0) this.spares.splice(spare, 1);
        this.released();
      },
      (request, owner) => this.sendOut(request, owner),
    );
    this.processes.add(process);
    return process;
  }

  /** A request of user code, sent out in the name of its code (tenant, reactor or transform) and call. */
  private sendOut(request: UserRequest, owner: OutboundOwner): Promise<UserAnswer> {
    const origin = this.origins.get(owner.instance);
    if (!this.host.outbound || !origin) {
      const why = origin ? 'this runtime has no outbound network' : 'its code was unloaded';
      return Promise.reject(
        Object.assign(new Error(`The request was not sent: ${why}.`), { code: 'ERR_SVC_NO_NETWORK' }),
      );
    }
    return this.host.outbound(request, { ...origin, traceId: owner.requestId ?? '' });
  }

  private refill(count: number): void {
    while (!this.disposed && this.spares.length < count && this.budget.hasRoom(this.processes))
      this.spares.push(this.spawn());
  }
}
