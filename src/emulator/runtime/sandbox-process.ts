import type { ChildProcess } from 'node:child_process';
import type { Duplex } from 'node:stream';
import { Channel } from './channel.js';
import { UserCodeError, fromSerialized } from './user-code-error.js';
import { answerSvc } from './svc-request.js';
import { problems } from './process-problems.js';
import { checkedMessage } from './inbound.js';
import { type CrashReport, startSandboxChild } from './sandbox-child.js';
import { ProcessWatch } from './process-watch.js';
import { LoadedVersions } from './loaded-versions.js';
import { frameJson } from './json-text.js';
import {
  MAX_FRAME_BYTES,
  MAX_INBOUND_FRAME_BYTES,
  type FromSandbox,
  type InitRequest,
  type ToSandbox,
} from './protocol.js';
import type { LogEntry, PendingCall, SandboxLimits, SvcHandler } from './types.js';
import { ProcessLogs } from './process-logs.js';
import { OutboundRequests, type OutboundOwner, type SendOut } from './outbound-requests.js';

/** What a call is answered when its process turns out to be busy with work left behind: run it elsewhere. */
export const BUSY = Symbol('busy');

/**
 * One sandbox process, seen from the emulator: it runs the code versions of one group (a tenant's). It holds no
 * file descriptor of the emulator but its channel; its death (abort, out of memory, a kill) fails
 * the calls inside it and nothing else. Memory (heap and ArrayBuffers, as the process's RSS) and
 * work left running after a call returned are watched from here, outside the code they limit.
 */
export class SandboxProcess {
  readonly booted: Promise<void>;
  /** Its OS process is gone (its inspector's port free again). */
  readonly exited: Promise<void>;
  dead = false;
  /** Calls in flight. */
  readonly calls = new Map<number, PendingCall>();
  /** The code versions it holds (loaded-versions.ts). */
  private readonly versions = new LoadedVersions();
  private readonly child: ChildProcess;
  private readonly channel: Channel<FromSandbox, ToSandbox>;
  private pendingBoot: { resolve: () => void; reject: (error: Error) => void } | undefined;
  private readonly pendingLoads = new Map<
    string,
    { filename: string; resolve: () => void; reject: (error: UserCodeError) => void }
  >();
  /** What its stderr said of its end (sandbox-child.ts). */
  private readonly crash: CrashReport;
  private callSeq = 0;
  /** Its console lines, counted again here (process-logs.ts). */
  readonly logs: ProcessLogs;
  private deathReason: string | undefined;
  lastUsed = performance.now();
  /** Memory (what it holds of the budget: process-budget.ts), liveness, and work left running with no call (process-watch.ts). */
  readonly watchdog: ProcessWatch;
  /** User code's `https` requests, sent out from here (outbound-requests.ts). */
  private readonly outbound: OutboundRequests;

  constructor(
    init: Omit<InitRequest, 'type'>,
    private readonly limits: SandboxLimits,
    onLog: (entry: LogEntry) => void,
    private readonly onDeath: (process: SandboxProcess) => void,
    sendOut: SendOut,
  ) {
    this.outbound = new OutboundRequests(
      (message) => this.send(message),
      sendOut,
      () => this.channel.backlog,
    );
    this.watchdog = new ProcessWatch({
      pid: () => this.child.pid,
      memoryMb: limits.memoryMb,
      windows: limits.windows,
      working: () => this.calls.size > 0 || this.pendingLoads.size > 0,
      lastUsed: () => this.lastUsed,
      sendProbe: (seq) => this.send({ type: 'probe', seq }),
      kill: (reason) => this.kill(reason),
      // A debugger's pause is not seen from outside: nothing is judged while one may attach.
      off: limits.inspectPort !== undefined,
    });
    ({ child: this.child, crash: this.crash, exited: this.exited } = startSandboxChild(init.projectDir, limits, onLog));
    this.logs = new ProcessLogs(limits, onLog);
    this.channel = new Channel(this.child.stdio[3] as Duplex, MAX_FRAME_BYTES, {
      message: (message, bytes) => this.receive(message, bytes),
      broken: (reason) => this.onBroken(reason),
      drain: () => this.outbound.drained(),
    });
    // 'close', not 'exit': by then stderr is read to its end, and with it why a process crashed.
    this.child.on('close', (code, signal) => this.onExit(code, signal));
    this.child.on('error', (error) => this.onExit(null, null, error));
    this.booted = new Promise((resolve, reject) => (this.pendingBoot = { resolve, reject }));
    this.booted.catch(() => {});
    this.send({ type: 'init', ...init });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Whether the process answers (process-watch.ts). */
  get responsive(): boolean {
    return this.watchdog.responsive;
  }

  /** Booting, compiling code, or holding a call on its way (between its load and its invoke). */
  get preparing(): boolean {
    return this.pendingBoot !== undefined || this.pendingLoads.size > 0 || this.versions.pinned;
  }

  has(vid: string): boolean {
    return this.versions.has(vid);
  }

  /** Whether a version is loaded and ready (not only asked for); marks it the most recently used. */
  loaded(vid: string): boolean {
    return this.versions.isReady(vid);
  }

  /** Compiles a version; rejects with a 422 (file:line:column) when it does not load. */
  load(vid: string, instance: string, code: string, filename: string, sourceUrl?: string): Promise<void> {
    if (this.dead)
      return Promise.reject(problems.stopped(`${filename} did not load`, this.deathReason ?? 'it stopped'));
    const existing = this.versions.touch(vid);
    if (existing) return existing;
    const loading = new Promise<void>((resolve, reject) => {
      const timer = this.deadline(() => {
        this.pendingLoads.delete(vid);
        reject(problems.loadTimedOut(filename, this.limits.loadTimeoutMs));
        this.kill(`${filename} did not finish loading within ${this.limits.loadTimeoutMs} ms`);
      }, this.limits.loadTimeoutMs);
      this.pendingLoads.set(vid, {
        filename,
        resolve: () => (clearTimeout(timer), resolve()),
        reject: (error) => (clearTimeout(timer), reject(error)),
      });
      this.send({ type: 'load', vid, code, filename, ...(sourceUrl !== undefined && { sourceUrl }) });
      this.watchdog.pace();
    });
    this.versions.add(vid, instance, loading);
    return loading;
  }

  unload(vid: string): void {
    if (!this.versions.has(vid)) return;
    this.versions.forget(vid);
    this.outbound.endOwned(null, vid);
    this.send({ type: 'unload', vid });
  }

  /** Keeps a version loaded while a call is on its way to it (between its load and its invoke). */
  pin(vid: string): () => void {
    return this.versions.pin(vid);
  }

  /** Unloads the least recently used versions with no call in flight or on its way, down to `keep`. */
  trim(keep: number): void {
    if (this.versions.size <= keep) return;
    const busy = new Set([...this.calls.values()].map((call) => call.vid));
    for (const vid of this.versions.beyond(keep, (v) => busy.has(v) || this.pendingLoads.has(v))) this.unload(vid);
  }

  /**
   * Runs a loaded version once. Rejects with a UserCodeError: 408 after the timeout, 500 when the
   * process dies under it. Resolves BUSY instead when the process turns out to be busy.
   */
  invoke(
    vid: string,
    payload: { args: unknown; configuration: unknown },
    options: {
      label: string;
      timeoutMs: number;
      requestId?: string | undefined;
      svc: SvcHandler | null;
      clockOffsetMs?: number | undefined;
    },
  ): Promise<{ value: unknown; logs: LogEntry[] } | typeof BUSY> {
    if (this.dead)
      return Promise.reject(problems.stopped(`${options.label} was not run`, this.deathReason ?? 'it stopped'));
    this.lastUsed = performance.now();
    const logs: LogEntry[] = [];
    const id = ++this.callSeq;
    // Args given as JsonText (serialised once by the caller, which measured them) go in as they are.
    const frame = frameJson({
      type: 'invoke',
      id,
      vid,
      requestId: options.requestId ?? '',
      ...payload,
      svc: options.svc !== null,
      // Only for a tenant whose clock was moved: every other call's frame is as it always was.
      ...(options.clockOffsetMs !== undefined && { clockOffsetMs: options.clockOffsetMs }),
    } satisfies ToSandbox);
    // Only a frame that could be over the limit (3 bytes a UTF-16 unit at most) is measured.
    if (frame.length * 3 > MAX_INBOUND_FRAME_BYTES && Buffer.byteLength(frame) > MAX_INBOUND_FRAME_BYTES) {
      return Promise.reject(problems.inputTooLarge(options.label, Buffer.byteLength(frame), MAX_INBOUND_FRAME_BYTES));
    }
    return new Promise((resolve, reject) => {
      // Sent to a process already held by code that does not yield: it waits behind that code.
      const queued = !this.responsive;
      const sentAt = performance.now();
      const timer = this.deadline(() => {
        this.calls.delete(id);
        this.outbound.endOwned(id);
        reject(
          queued && this.watchdog.lastAnswerAt < sentAt
            ? problems.notRun(
                options.label,
                `its timeout of ${options.timeoutMs} ms passed while the sandbox process was held by ${this.holder(id)}`,
                logs,
              )
            : problems.timedOut(options.timeoutMs, logs),
        );
        // A loop that never yields holds the whole process: replace it. Otherwise only this call is dropped.
        if (!this.responsive)
          this.kill(`${options.label} ran past its timeout of ${options.timeoutMs} ms without yielding`);
        else this.send({ type: 'cancel', id });
        this.watchdog.pace();
      }, options.timeoutMs);
      const settle = () => (
        clearTimeout(timer), this.calls.delete(id), this.outbound.endOwned(id), this.watchdog.pace()
      );
      this.calls.set(id, {
        vid,
        queued,
        sentAt,
        instance: this.versions.idOf(vid) ?? vid,
        label: options.label,
        requestId: options.requestId,
        svc: options.svc,
        logs,
        logBudget: this.logs.callBudget(),
        svcInFlight: 0,
        resolve: (value) => (settle(), resolve({ value, logs })),
        reject: (error) => (settle(), reject(error)),
        busy: () => (settle(), resolve(BUSY)),
      });
      if (!this.dead) this.channel.sendText(frame);
      this.watchdog.pace();
    });
  }

  /** A timeout's timer; none while a debugger may attach (a call paused at a breakpoint is not over). */
  private deadline(expire: () => void, ms: number): NodeJS.Timeout | undefined {
    return this.limits.inspectPort === undefined ? setTimeout(expire, ms) : undefined;
  }

  /** Sent while the process was held, and nothing heard of it since: the call never began. */
  private neverRan(call: PendingCall): boolean {
    return call.queued && this.watchdog.lastAnswerAt < call.sentAt;
  }

  /** Who holds the process: the oldest call in flight but `except`, or work left behind. */
  private holder(except: number): string {
    for (const [id, call] of this.calls) if (id !== except) return `a call of ${call.label} that does not yield`;
    return 'work an earlier call left running';
  }

  /** Ends the version's calls in flight with `error` (the sandbox is told to drop them: their timers, their work). */
  endCalls(vid: string, error: UserCodeError): void {
    for (const [id, call] of [...this.calls]) {
      if (call.vid !== vid) continue;
      call.reject(new UserCodeError(error.status, error.detail, { ...error.options, logs: call.logs }));
      this.send({ type: 'cancel', id });
    }
  }

  /** Stops the process; every call inside it fails with `reason`. */
  kill(reason: string): void {
    if (this.dead) return;
    this.deathReason ??= reason;
    this.child.kill('SIGKILL');
    this.die();
  }

  private send(message: ToSandbox): void {
    if (!this.dead) this.channel.send(message);
  }

  /** Every message, checked first: a sandbox that breaks the protocol is stopped, never obeyed. */
  private receive(message: unknown, bytes: number): void {
    if (this.dead) return;
    try {
      this.onMessage(checkedMessage(message), bytes);
    } catch (error) {
      this.kill(`it sent what the emulator does not accept: ${(error as Error).message}`);
    }
  }

  private onMessage(message: FromSandbox, bytes: number): void {
    this.watchdog.heard();
    switch (message.type) {
      case 'booted':
        if (!this.pendingBoot) throw new Error('booted twice');
        this.watchdog.booted();
        this.pendingBoot.resolve();
        this.pendingBoot = undefined;
        return;
      case 'loaded':
        if (this.pendingLoads.has(message.vid)) this.versions.markReady(message.vid);
        this.pendingLoads.get(message.vid)?.resolve();
        this.pendingLoads.delete(message.vid);
        return;
      case 'load-error': {
        const load = this.pendingLoads.get(message.vid);
        load?.reject(problems.doesNotLoad(message.error, load.filename));
        this.pendingLoads.delete(message.vid);
        return;
      }
      case 'log': {
        const call = message.id === null ? undefined : this.calls.get(message.id);
        if (message.id !== null && !call) return;
        this.logs.receive(message, call, this.versions.idOf(String(message.vid)) ?? 'sandbox');
        return;
      }
      case 'rpc':
        void answerSvc(this.calls.get(message.invocation), message.method, message.params, this.limits).then((answer) =>
          this.send({ type: 'rpc-result', id: message.id, ...answer }),
        );
        return;
      case 'result': {
        const call = this.calls.get(message.id);
        if (!call) return;
        if (message.ok && bytes > this.limits.maxResultBytes + 1024) {
          call.reject(problems.resultTooLarge(this.limits.maxResultBytes, call.logs));
        } else if (message.ok) call.resolve(message.value);
        else call.reject(fromSerialized(message.error, call.logs));
        return;
      }
      case 'busy': {
        // The call goes elsewhere first; then this process goes.
        this.calls.get(message.id)?.busy();
        this.kill(
          message.tampered
            ? "its code made a setting every EventEmitter inherits read-only (Node's classes could no longer work there)"
            : 'it kept a core busy after its last call returned',
        );
        return;
      }
      case 'probe':
        this.watchdog.answered(message.seq, message.idleCpuMs, message.idleWallMs);
        return;
      default:
        this.outbound.receive(message, message.type === 'https' ? this.owner(message.call, message.vid) : undefined);
    }
  }

  /** Whose request it is: the call in flight it names (undefined once over), or a version's top-level code. */
  private owner(id: number | null, vid: string): OutboundOwner | undefined {
    const call = id === null ? undefined : this.calls.get(id);
    if (call) return { instance: call.instance, requestId: call.requestId, call: id, vid: call.vid };
    const instance = id === null ? this.versions.idOf(vid) : undefined;
    return instance === undefined ? undefined : { instance, requestId: undefined, call: null, vid };
  }

  /**
   * The channel ended. A process that crashed closes it before it exits: give the exit a moment to
   * tell why (out of memory, an abort). A channel broken by the sandbox (a frame over the limit) is
   * reason enough to stop it.
   */
  private onBroken(reason: string): void {
    if (this.dead) return;
    if (!reason.startsWith('channel')) return this.kill(`it broke its channel (${reason})`);
    setTimeout(() => this.kill(`its channel closed (${reason})`), 1000).unref();
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null, error?: Error): void {
    if (!this.deathReason) {
      if (this.crash.outOfMemory) this.deathReason = `it ran out of memory (limit ${this.limits.memoryMb} MB)`;
      else if (error) this.deathReason = `it could not start: ${error.message}`;
      else this.deathReason = signal ? `it stopped (${signal})` : `it exited (code ${String(code)})`;
    }
    this.die();
  }

  private die(): void {
    if (this.dead) return;
    this.dead = true;
    this.watchdog.stop();
    this.channel.close();
    const reason = this.deathReason ?? 'it stopped';
    this.pendingBoot?.reject(problems.notStarted(reason));
    for (const load of this.pendingLoads.values()) {
      load.reject(problems.loadStopped(load.filename, reason));
    }
    this.pendingLoads.clear();
    this.outbound.endAll();
    for (const call of [...this.calls.values()]) {
      if (this.neverRan(call)) {
        call.reject(problems.notRun(call.label, 'its sandbox process was replaced', call.logs));
        continue;
      }
      call.reject(problems.callStopped(call.label, reason, call.logs));
    }
    this.calls.clear();
    this.versions.clear();
    this.onDeath(this);
  }
}
