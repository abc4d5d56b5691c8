import type { Readable } from 'node:stream';
import type { CallLogBudget } from './log-budget.js';
import type { LogLevel, SvcMethod } from './protocol.js';
import type { UserCodeError } from './user-code-error.js';
import type { UserTlsOptions } from '../../lib/tls-options.js';

/** One line of user code's console output. */
export interface LogEntry {
  level: LogLevel;
  text: string;
  /** The code version's id (a reactor or transform id). */
  instance: string;
  requestId?: string | undefined;
}

/** Answers a `req.svc` call under the Application bound to the invocation. */
export type SvcHandler = (method: SvcMethod, params: unknown) => Promise<unknown>;

export interface LoadSpec {
  /** What the code belongs to (a reactor id, a proxy transform id). */
  id: string;
  /** Changes whenever the code does; loading the same id and version again reuses the instance. */
  version: string | number;
  code: string;
  /** The user's name for the file; stack traces and load errors show it. */
  filename: string;
  /** Whose code it is. Default `default`. */
  tenant?: string;
  /**
   * The code owner within the tenant: versions of one owner share sandbox processes, no two owners
   * ever do. Default: the id (a reactor); a proxy's request and response transforms share its id.
   */
  group?: string;
  /** How problems name the code ("reactor charge"). Default: the file name. */
  label?: string;
  /** Whose code it is, as svc.yaml names it: what `inspect.sourcePath` is asked for its file. */
  source?: CodeSource;
  /** The URL the code is compiled under, when not its file name: set by the runtime (inspect.ts). */
  sourceUrl?: string | undefined;
}

/** A reactor's code, or one of a proxy's two transforms, by the name of its resource. */
export interface CodeSource {
  kind: 'reactor' | 'transform';
  name: string;
  which?: 'request' | 'response';
}

/**
 * Debugging user code (`svc serve --inspect`): each sandbox process listens for a debugger on
 * 127.0.0.1:`port`, runs without Node's permission model (it cannot be had with the inspector on
 * Node 20), with no call or load timeout and no watch of its work (a pause at a breakpoint is not
 * seen from outside); one sandbox process in all, so that the port is always the same process's.
 */
export interface InspectOptions {
  port: number;
  /** The user's own file of a code (its absolute path): the code's source URL, where breakpoints bind. */
  sourcePath?: (kind: CodeSource['kind'], name: string, which?: CodeSource['which']) => string | undefined;
}

export interface InvokeOptions {
  timeoutMs: number;
  requestId?: string;
  /** The client behind `req.svc`; null or absent makes `req.svc` null. */
  svc?: SvcHandler | null;
  /** How far the tenant's clock is ahead of the emulator's: `Date` in the code reads it. Absent: 0. */
  clockOffsetMs?: number;
}

export interface InvokeResult {
  value: unknown;
  logs: LogEntry[];
  ms: number;
}

export interface RuntimeOptions {
  /** Where allowlisted npm packages are resolved from (the user's project). Default: cwd. */
  projectDir?: string;
  npmAllowlist?: readonly string[];
  /**
   * What shares a sandbox process: `tenant` (default), the code of one tenant, each version in a
   * Compartment of its own (docs/sandbox.md says what one owner can still reach of another); or
   * `owner`, a process per reactor or proxy (stronger separation, a process boot per owner).
   */
  isolation?: 'tenant' | 'owner';
  /**
   * Sandbox processes in all beyond each group's first (which no group is refused: no tenant waits
   * for another's calls), at most. Default 64.
   */
  maxProcesses?: number;
  /**
   * The resident memory sandbox processes may hold in all, in MB, each counted as last measured: a
   * process beyond a group's first starts only within it (docs/sandbox.md). Default half the memory
   * free when the runtime starts, from 512 MB to 8 GB.
   */
  memoryBudgetMb?: number;
  /** Sandbox processes one group (tenant) may use at once (a second one while the first is held by a CPU-bound call). Default 2. */
  maxProcessesPerGroup?: number;
  /** Code versions one process keeps loaded; the least recently used beyond it are unloaded (and reloaded on demand). Default 256. */
  maxVersionsPerProcess?: number;
  /** How long an extra process (beyond an owner's first) may sit idle before it is stopped. Default 10 s. */
  idleMs?: number;
  /** How long a group's first process stays booted with no call; then it is stopped (its code loads again at its next call). Default 5 min. */
  keepWarmMs?: number;
  /** Memory of each sandbox process beyond its start (heap and ArrayBuffers), in MB. Default 256. */
  memoryMb?: number;
  /** Unassigned sandbox processes kept booted, so that a new tenant's first load costs milliseconds. Default 0 (`prewarm` boots one). */
  spares?: number;
  /** How long top-level code may take to load. Default 5 s. */
  loadTimeoutMs?: number;
  /**
   * Console output kept per invocation, in bytes and in lines (whichever runs out first; then one
   * notice line and the rest dropped). Default 64 KiB and 1,000 lines. Output with no call running
   * (top-level code, its timers) shares a budget of the same size per process, refilled at
   * `strayLogLinesPerSecond`.
   */
  maxLogBytes?: number;
  maxLogLines?: number;
  /** How fast the budget of console output with no call running refills: lines (and 1 KiB each) a second. Default 10. */
  strayLogLinesPerSecond?: number;
  /** `req.svc` calls one invocation may have in flight. Default 100. */
  maxSvcInFlight?: number;
  /** The largest result a call may return (its JSON). Default 5 MB, the platform's payload limit. */
  maxResultBytes?: number;
  /** Every console line of user code, as it happens. */
  onLog?: (entry: LogEntry) => void;
  /** A debugger may attach to the sandbox (InspectOptions); off by default. */
  inspect?: InspectOptions;
  /** How long the watch of sandbox processes waits before judging one (RuntimeWindows); any left out keep their default. */
  windows?: Partial<RuntimeWindows>;
}

/**
 * The windows the runtime watches sandbox processes by (defaults in options.ts DEFAULT_WINDOWS). A
 * test sets short ones to see a judgement happen without waiting out real seconds.
 */
export interface RuntimeWindows {
  /** Busy time with no call running (less the quiet time since) that replaces a process. Default 1 s. */
  busyForMs: number;
  /** A process that has not answered a probe within this long, with no call or load left, is stopped. Default 1 s. */
  stuckMs: number;
  /** How often a process is looked at (memory, a probe) while it works or was just used. Default 50 ms. */
  activeTickMs: number;
  /** How often an idle process is looked at. Default 1 s. */
  idleTickMs: number;
  /** How long after its last call a process still counts as just used. Default 2 s. */
  recentlyUsedMs: number;
  /** A probed process silent this long is held by code that does not yield: calls go elsewhere. Default 120 ms. */
  responsiveMs: number;
  /** Thread-pool work of a call that returned longer ago than this makes its process refuse the next call. Default 100 ms. */
  leftWorkGraceMs: number;
  /** How long an owner's first process stays once its owner is gone (all its code unloaded). Default 1 s. */
  ownerGoneMs: number;
}

/** The limits of one sandbox process, as the emulator holds it to them. */
export interface SandboxLimits {
  memoryMb: number;
  /** What the watch of the process waits before judging it. */
  windows: RuntimeWindows;
  loadTimeoutMs: number;
  /** The port a debugger attaches to: no permission model, no timeouts, no watch (InspectOptions). */
  inspectPort?: number | undefined;
  /**
   * Checked in the emulator again, on what the sandbox sends: console lines and bytes per call and
   * with no call running (log-budget.ts), result bytes, req.svc calls in flight.
   */
  maxLogBytes: number;
  maxLogLines: number;
  strayLogLinesPerSecond: number;
  maxResultBytes: number;
  maxSvcInFlight: number;
}

/** An `https` request of user code, as the emulator sends it on (the outbound gateway's request). */
export interface UserRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: Buffer | Readable | undefined;
  /** Its TLS options (`ca`, `rejectUnauthorized`...): Node's defaults for the rest. */
  tls: UserTls;
  /** Aborted when the request is given up (its call ended, its code was unloaded, its process died). */
  signal: AbortSignal;
}

/** The TLS options of a request of user code (lib/tls-options.ts). */
export type UserTls = UserTlsOptions;

/** The answer to it: the body streams. */
export interface UserAnswer {
  status: number;
  statusMessage?: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

/** Whose request it is: the code (a reactor, a transform) and the call that made it. */
export interface UserRequestOrigin {
  tenantId: string;
  kind: 'reactor' | 'transform';
  id: string;
  name: string;
  /** The call's request id ('' for top-level code's work). */
  traceId: string;
}

/** Sends user code's request out of the emulator (createEmulator gives the outbound gateway's send). */
export type SendUserRequest = (request: UserRequest, origin: UserRequestOrigin) => Promise<UserAnswer>;

/** What the emulator gives the runtime beyond its options: where user code's requests go out. */
export interface RuntimeHost {
  /** Without it, user code's `https` requests fail (a runtime with no network). */
  outbound?: SendUserRequest;
  /**
   * A code version was retired (replaced, its last call ended) or unloaded (deleted): its sandbox
   * holds it no more, nor anything its module state kept (the leak guard forgets what it revealed).
   */
  retired?: (id: string, version: string | number) => void;
}

/** A call in flight in a sandbox process, as the emulator holds it. */
export interface PendingCall {
  vid: string;
  /** Sent to the process while it was held by code that does not yield, at `sentAt`. */
  queued: boolean;
  sentAt: number;
  instance: string;
  label: string;
  requestId: string | undefined;
  svc: SvcHandler | null;
  logs: LogEntry[];
  logBudget: CallLogBudget;
  svcInFlight: number;
  resolve: (value: unknown) => void;
  reject: (error: UserCodeError) => void;
  /** Answered BUSY: this process was still busy with earlier work, and the call goes to another. */
  busy: () => void;
}
