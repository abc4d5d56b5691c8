/**
 * The sandbox process: runs the code versions of one owner, each in an SES Compartment, in a Node
 * process of its own that the emulator started with no file descriptor of its own but a channel
 * (fd 3), under Node's permission model (see sandbox-process.ts for the flags). User code sees
 * Node 16's safe globals and a `require` that serves facades of the allowlisted modules; it never
 * sees `process`, a Node object of the network stack, or anything of the emulator.
 */
import 'ses';
import { Socket } from 'node:net';
import { createRequire } from 'node:module';
import { format } from 'node:util';
import { releaseWhenIdle } from '../../lib/idle-release.js';
import { MAX_DEPTH, exceedsDepth } from '../../lib/json-depth.js';
import { AsyncOwner } from './async-owner.js';
import { Channel } from './channel.js';
import { loadCode, type Loaded } from './compartment.js';
import {
  closeInheritedDescriptors,
  confineProcessState,
  hostInstances,
  madeAsynchronously,
  nodeErrors,
  processDefaults,
  restrictNetwork,
  userPerformance,
} from './host-hardening.js';
import {
  Agent,
  SandboxRequest,
  SandboxResponse,
  type RequestOwner,
  type WorkOwner,
  cryptoFacade,
  httpsFacade,
} from './facades.js';
import { hardenHost } from './harden-host.js';
import {
  MAX_INBOUND_FRAME_BYTES,
  MIN_BUSY_WINDOW_MS,
  BUSY_FOR_MS,
  busyBalance,
  type FromSandbox,
  type InitRequest,
  type InvokeRequest,
  type LogLevel,
  type SerializedError,
  type SvcMethod,
  type ToSandbox,
} from './protocol.js';
import { describeThrown, locate, prepareUserStack } from './stacks.js';
import { TimerHandle, sandboxTimers } from './timers.js';
import { CallLogBudget, type LogLimits, StrayLogBudget } from './log-budget.js';
import { USER_ERROR_STATUS } from './platform-errors.js';

const hostRequire = createRequire(import.meta.url);

interface Invocation {
  id: number;
  vid: string;
  /** Its console budget (log-budget.ts), out of reach of its code. */
  logBudget: CallLogBudget;
  svcInFlight: number;
  cancelled: boolean;
  /** Over: timers it set are cleared, and any it sets from leftover work are cleared at once. */
  finished: boolean;
  /** What ends with it: its timers and outbound requests. */
  timers: Set<() => void>;
  /** Its `crypto` work on the thread pool under way (facades.ts). */
  jobs: number;
}

/**
 * The call the code running now belongs to, across its awaits and timers: kept out of reach of user
 * code (async-owner.ts), as a token whose record stays here.
 */
const context = new AsyncOwner<object>();
const records = new WeakMap<object, Invocation>();
/** Top-level code runs under a token of its version: the timers it sets go when the version does. */
const versionRecords = new WeakMap<object, TimerOwner>();
const versionTimers = new Map<string, TimerOwner>();

type TimerOwner = RequestOwner;

/**
 * Calls that returned with `crypto` work of theirs still on the thread pool, and when: its callback
 * will be dropped, but the work itself runs on (a billion pbkdf2 iterations, for minutes). Past a
 * moment's grace, the process is replaced before its next call.
 */
const workLeftBehind = new Map<WorkOwner, number>();
const LEFT_WORK_GRACE_MS = 100;

function current(): Invocation | undefined {
  const token = context.get();
  return typeof token === 'object' && token !== null ? records.get(token) : undefined;
}

function timerOwner(): TimerOwner | undefined {
  const token = context.get();
  return typeof token === 'object' && token !== null ? (records.get(token) ?? versionRecords.get(token)) : undefined;
}

/** The host's clock and CPU meter, taken before user code could pin the `performance` it is handed. */
const now = performance.now.bind(performance);
const loopUse = performance.eventLoopUtilization.bind(performance);

/**
 * Where a window with no call running begins: wall time, CPU time, and the event loop's use. The
 * loop's busy time counts as well as CPU time: on a loaded machine a spinning timer gets a small
 * share of a core, but its loop is still never idle.
 */
function idleMark() {
  return { at: now(), cpu: process.cpuUsage(), loop: loopUse() };
}

closeInheritedDescriptors();
// Buffer.allocUnsafe and small Buffer.from() share an 8 KiB pool; with it, one call could read
// text another call (or the console) left there. No pool, and --zero-fill-buffers for the rest.
Buffer.poolSize = 0;
restrictNetwork();

lockdown({
  errorTaming: 'unsafe', // keep stacks: users need their file and line (prepareUserStack trims them)
  localeTaming: 'unsafe',
  consoleTaming: 'unsafe',
  overrideTaming: 'severe', // let user code assign e.g. `obj.toString = ...` on its own objects
  stackFiltering: 'verbose',
  errorTrapping: 'none',
  unhandledRejectionTrapping: 'none',
});
// Hardened below with the rest: every compartment's Error hands it out, one object for all of them.
Error.prepareStackTrace = prepareUserStack as NonNullable<ErrorConstructor['prepareStackTrace']>;

/** What user code is handed of the host: the globals, and the modules `require` serves. */
// A timer a call sets belongs to it: cleared when the call ends, so that no call leaves work
// running (a spinning interval) in the process. Top-level code's timers stay; the emulator's
// probe recycles a process that keeps a core busy between calls.
const { timeoutSignal, ...TIMERS } = sandboxTimers((clear) => {
  const owner = timerOwner();
  if (owner?.finished) return false;
  owner?.timers.add(clear);
  return true;
}, timerOwner);
// This process serves user code only: its AbortSignal.timeout is the one on the calls' timers.
Object.defineProperty(AbortSignal, 'timeout', { value: timeoutSignal, writable: true, configurable: true });
const HOST_GLOBALS = {
  ...TIMERS,
  queueMicrotask,
  Buffer,
  URL,
  URLSearchParams,
  TextEncoder,
  TextDecoder,
  AbortController,
  AbortSignal,
  Event,
  EventTarget,
  atob,
  btoa,
};
const MODULES: Record<string, unknown> = {
  buffer: hostRequire('node:buffer'),
  crypto: cryptoFacade(timerOwner),
  https: httpsFacade(timerOwner),
  querystring: hostRequire('node:querystring'),
  stream: hostRequire('node:stream'),
  url: hostRequire('node:url'),
  util: hostRequire('node:util'),
};
confineProcessState();
const writableSlots = hardenHost(
  [
    ...Object.values(HOST_GLOBALS),
    ...Object.values(MODULES),
    Intl,
    prepareUserStack,
    SandboxRequest,
    SandboxResponse,
    Agent,
    TimerHandle,
  ],
  [...hostInstances(), ...nodeErrors(), ...(await madeAsynchronously())],
);

/** Node's process-wide defaults user code can set: put back around every call. */
const defaults = processDefaults(writableSlots);

let config: InitRequest | undefined;
const versions = new Map<string, Loaded>();
const invocations = new Map<number, Invocation>();
/** What a console line outside any call belongs to: the version being loaded. */
let loadingVid: string | null = null;
let rpcSeq = 0;
const pendingRpc = new Map<
  number,
  { invocation: Invocation; resolve: (value: unknown) => void; reject: (error: unknown) => void }
>();
/** How busy the process was with no call running, when the message being read began to arrive. */
let idleAtArrival: IdleReport | undefined;
/** Since when no call has been running, and the CPU time used until then. */
let idleSince = idleMark();

const channel = new Channel<ToSandbox, FromSandbox>(
  new Socket({ fd: 3, readable: true, writable: true }),
  MAX_INBOUND_FRAME_BYTES,
  {
    message: onMessage,
    // The emulator is gone (or stopped us): nothing is left to do.
    broken: () => process.exit(0),
    // How busy the process was before a message came, not counting the reading of it (5 MB of JSON).
    frameStarts: () => {
      if (invocations.size === 0) idleAtArrival = idleReport();
    },
  },
);
const post = (message: FromSandbox) => channel.send(message);

// Work user code left behind (a timer that throws after the call returned) must not end the process.
process.on('uncaughtException', (error) => log('error', [`Uncaught ${describeThrown(error)}`]));
process.on('unhandledRejection', (reason) => log('error', [`Unhandled rejection: ${describeThrown(reason)}`]));

post({ type: 'booted' });
// Memory the heap grew under a burst of calls or reloads goes back once the process is quiet: never
// while a call is under way (one waiting on I/O leaves the event loop quiet). The collection is the
// process's own work, not work a call left behind: the busy-while-idle watch starts again after it.
// It is held here, out of reach of user code (see idle-release.ts).
releaseWhenIdle({
  isIdle: () => invocations.size === 0 && pendingRpc.size === 0,
  onRelease: () => {
    idleSince = idleMark();
  },
});

function onMessage(message: ToSandbox): void {
  switch (message.type) {
    case 'init':
      config = message;
      strayBudget = new StrayLogBudget({ ...logLimits(message), linesPerSecond: message.strayLogLinesPerSecond }, now);
      return;
    case 'load': {
      if (!config) return;
      // The idle time before it is judged first: the compiling that follows is work asked for.
      if (invocations.size === 0) judge(idleReport());
      loadingVid = message.vid;
      const token = Object.freeze(Object.create(null) as object);
      const owner: TimerOwner = { finished: false, timers: new Set(), jobs: 0 };
      versionRecords.set(token, owner);
      const outcome = context.run(token, () =>
        loadCode(
          message,
          config!,
          MODULES,
          { ...HOST_GLOBALS, performance: userPerformance() },
          userConsole(message.vid),
        ),
      );
      loadingVid = null;
      if ('error' in outcome) {
        endTimers(owner);
        post({ type: 'load-error', vid: message.vid, error: outcome.error });
      } else {
        versions.set(message.vid, outcome.loaded);
        versionTimers.set(message.vid, owner);
        post({ type: 'loaded', vid: message.vid });
      }
      // Compiling is work asked for, not work left behind.
      if (invocations.size === 0) idleSince = idleMark();
      return;
    }
    case 'unload': {
      versions.delete(message.vid);
      const owner = versionTimers.get(message.vid);
      versionTimers.delete(message.vid);
      if (owner) endTimers(owner);
      return;
    }
    case 'invoke':
      void invoke(message);
      return;
    case 'cancel': {
      // The emulator gave up on the call (its timeout): it is over here too, whatever its code still
      // awaits, so that it neither holds the idle-CPU watch off nor sets timers.
      const invocation = invocations.get(message.id);
      if (!invocation) return;
      invocation.cancelled = true;
      endTimers(invocation);
      invocations.delete(message.id);
      if (invocations.size === 0) idleSince = idleMark();
      return;
    }
    case 'probe': {
      const report = idleReport();
      judge(report);
      post({ type: 'probe', seq: message.seq, idleCpuMs: report.idleCpuMs, idleWallMs: report.idleWallMs });
      if (invocations.size === 0) idleSince = idleMark();
      return;
    }
    case 'rpc-result': {
      const pending = pendingRpc.get(message.id);
      if (!pending) return;
      pendingRpc.delete(message.id);
      pending.invocation.svcInFlight--;
      if (message.ok) pending.resolve(message.value === undefined ? undefined : JSON.parse(message.value));
      else pending.reject(message.error);
      return;
    }
  }
}

/** Its timers are cleared, and any it sets from now on are cleared at once. */
function endTimers(owner: TimerOwner): void {
  owner.finished = true;
  const ends = [...owner.timers];
  owner.timers.clear();
  for (const end of ends) end();
  if (owner.jobs > 0) workLeftBehind.set(owner, now());
}

/** Whether thread-pool work of a call that returned over `graceMs` ago still runs. */
function leftBehindFor(graceMs: number): boolean {
  for (const [owner, since] of workLeftBehind) {
    if (owner.jobs === 0) workLeftBehind.delete(owner);
    else if (now() - since > graceMs) return true;
  }
  return false;
}

interface IdleReport {
  idleCpuMs: number;
  idleWallMs: number;
  /** The window it measures (the `idleSince` it began with). */
  since: typeof idleSince;
}

/** Busy time (CPU, or the event loop's) with no call running (work a call left behind), over the wall time since. */
function idleReport(): IdleReport {
  const since = idleSince;
  if (invocations.size > 0) return { idleCpuMs: 0, idleWallMs: 0, since };
  const idleWallMs = now() - since.at;
  // A window shorter than any that could count as busy needs no CPU reading (a system call, on the
  // path of every call that follows another closely).
  if (idleWallMs < MIN_BUSY_WINDOW_MS) return { idleCpuMs: 0, idleWallMs, since };
  const used = process.cpuUsage(since.cpu);
  // Busy time: CPU (the thread pool's included), or the event loop's, whichever is more.
  const busyMs = Math.max((used.user + used.system) / 1000, loopUse(since.loop).active);
  return { idleCpuMs: busyMs, idleWallMs, since };
}

/** Busy time with no call running, less the quiet time since (protocol.ts busyBalance). */
let busyMs = 0;
let judged: typeof idleSince | undefined;

/** Adds a window to the busy balance, once (a probe and a call may arrive in one read), and returns it. */
function judge(report: IdleReport): number {
  if (report.since !== judged) {
    judged = report.since;
    busyMs = busyBalance(busyMs, report.idleCpuMs, report.idleWallMs);
  }
  return busyMs;
}

async function invoke(request: InvokeRequest): Promise<void> {
  const loaded = versions.get(request.vid);
  if (!loaded || !config) {
    post({
      type: 'result',
      id: request.id,
      ok: false,
      error: { kind: 'user', name: 'Error', message: 'This code version is not loaded in the sandbox.' },
    });
    return;
  }
  // A process that has kept a core busy since its last call returned is not given another one, nor
  // one whose thread pool still works for a call that returned (other calls may be under way).
  if (
    (invocations.size === 0 && idleAtArrival && judge(idleAtArrival) >= BUSY_FOR_MS) ||
    leftBehindFor(LEFT_WORK_GRACE_MS)
  ) {
    post({ type: 'busy', id: request.id });
    return;
  }
  // Nor one whose Node classes user code broke for every owner (a prototype's setting pinned).
  if (!defaults.intact()) {
    post({ type: 'busy', id: request.id, tampered: true });
    return;
  }
  const invocation: Invocation = {
    id: request.id,
    vid: request.vid,
    logBudget: new CallLogBudget(logLimits(config)),
    svcInFlight: 0,
    cancelled: false,
    finished: false,
    timers: new Set(),
    jobs: 0,
  };
  invocations.set(request.id, invocation);
  const token = Object.freeze(Object.create(null) as object);
  records.set(token, invocation);
  defaults.reset();
  try {
    // Whatever goes wrong here answers the call: a call never waits for its timeout for want of one.
    const outcome = await context
      .run(token, () => run(loaded, request, invocation))
      .catch(
        (error: unknown): FromSandbox => ({
          type: 'result',
          id: request.id,
          ok: false,
          error: resultError(cut(`The result could not be read: ${describeThrown(error)}`)),
        }),
      );
    if (!invocation.cancelled) {
      if (typeof outcome === 'string') channel.sendText(outcome);
      else post(outcome);
    }
  } finally {
    endTimers(invocation);
    invocations.delete(request.id);
    defaults.reset();
    // A cancelled call was over when the emulator gave up on it; its code settling later (when it
    // chooses) starts no new idle window, or it could wipe the one under way at will.
    if (!invocation.cancelled && invocations.size === 0) idleSince = idleMark();
  }
}

/** The call's outcome: a message, or a result's frame written out (its value is JSON already). */
async function run(loaded: Loaded, request: InvokeRequest, invocation: Invocation): Promise<FromSandbox | string> {
  const { args, configuration } = request;
  const req = { args, configuration, svc: request.svc ? svcClient(invocation, loaded) : null };
  let result: unknown;
  try {
    // Called as a plain function: `this` is undefined, never an object of the host.
    result = await Reflect.apply(loaded.fn, undefined, [req]);
  } catch (error) {
    return { type: 'result', id: request.id, ok: false, error: serializeError(error, loaded) };
  }
  let value: string;
  try {
    // A function or a symbol has no JSON, as undefined has none: all three answer null.
    value = JSON.stringify(result === undefined ? null : result) ?? 'null';
  } catch (error) {
    // JSON.stringify recurses: a result nested thousands deep overflows the stack. The emulator
    // refuses JSON nested past the limit (400) and says so; this is the same, found sooner.
    if (error instanceof RangeError && exceedsDepth(result, MAX_DEPTH)) {
      return {
        type: 'result',
        id: request.id,
        ok: false,
        error: { ...resultError(`The function's result is nested deeper than ${MAX_DEPTH} levels.`), status: 400 },
      };
    }
    return {
      type: 'result',
      id: request.id,
      ok: false,
      error: resultError(`The function's result is not JSON: ${(error as Error).message}`),
    };
  }
  const limit = config!.maxResultBytes;
  if (value.length > limit || Buffer.byteLength(value) > limit) {
    return {
      type: 'result',
      id: request.id,
      ok: false,
      error: resultError(
        `The function's result is ${megabytes(Buffer.byteLength(value))} of JSON, over the ${megabytes(limit)} limit.`,
      ),
    };
  }
  return `{"type":"result","id":${request.id},"ok":true,"value":${value}}`;
}

function resultError(message: string): SerializedError {
  return { kind: 'result', name: 'TypeError', message };
}

function megabytes(bytes: number): string {
  return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`;
}

/** `req.svc`: each call is a message to the emulator, answered under the bound Application's permissions. */
function svcClient(invocation: Invocation, loaded: Loaded) {
  const call = (method: SvcMethod, params: unknown) =>
    new Promise((resolve, reject) => {
      const limit = config!.maxSvcInFlight;
      if (invocation.svcInFlight >= limit) {
        throw new (loaded.errors.RateLimitError as new (message: string) => Error)(
          `Too many req.svc calls in flight (at most ${limit} per invocation); await them.`,
        );
      }
      if (invocation.cancelled) throw new Error('This invocation was stopped.');
      if (exceedsDepth(params, MAX_DEPTH)) {
        throw new (loaded.errors.BadRequestError as new (message: string) => Error)(
          `The JSON is nested deeper than ${MAX_DEPTH} levels.`,
        );
      }
      const id = ++rpcSeq;
      invocation.svcInFlight++;
      pendingRpc.set(id, {
        invocation,
        resolve,
        reject: (problem) => {
          const { status, detail } = problem as { status: number; detail: string };
          const name = Object.entries(USER_ERROR_STATUS).find(([, code]) => code === status)?.[0];
          const ErrorClass = (name ? loaded.errors[name] : undefined) ?? Error;
          reject(new (ErrorClass as new (message: string) => Error)(detail));
        },
      });
      post({ type: 'rpc', id, invocation: invocation.id, method, params: JSON.stringify(params ?? null) ?? 'null' });
    });
  return harden({
    tokens: {
      create: (body: unknown) => call('tokens.create', body),
      retrieve: (id: unknown) => call('tokens.retrieve', id),
      delete: (id: unknown) => call('tokens.delete', id),
      list: (query: unknown) => call('tokens.list', query ?? {}),
    },
    tokenize: (body: unknown) => call('tokenize', body),
    detokenize: (body: unknown) => call('detokenize', body),
  });
}

/** console for one code version: each line goes to the emulator tagged with its call, within the call's byte budget. */
function userConsole(vid: string) {
  const method =
    (level: LogLevel) =>
    (...args: unknown[]) =>
      log(level, args, vid);
  return harden({
    log: method('log'),
    info: method('info'),
    warn: method('warn'),
    error: method('error'),
    debug: method('debug'),
    trace: method('debug'),
  });
}

function logLimits(init: InitRequest): LogLimits {
  return { maxLines: init.maxLogLines, maxBytes: init.maxLogBytes };
}

/**
 * Console output outside any call (top-level code, its timers, an uncaught error) shares one budget
 * per process, refilled slowly (set at init; nothing is logged before).
 */
let strayBudget: StrayLogBudget | undefined;

/** A console line, counted against its call's budget, or the process's when no call is running. */
function log(level: LogLevel, args: unknown[], vid: string | null = null): void {
  const invocation = current();
  // A call that is over (returned, or given up on) has nobody to read its output.
  if (invocation && (invocation.cancelled || invocation.finished)) return;
  const budget = invocation ? invocation.logBudget : strayBudget;
  if (!budget) return;
  const text = budget.take(() => {
    try {
      return format(...args);
    } catch (error) {
      return `[unprintable: ${(error as Error).message}]`;
    }
  });
  if (text === undefined) return;
  post({ type: 'log', id: invocation?.id ?? null, vid: invocation?.vid ?? vid ?? loadingVid, level, text });
}

/** What a thrown error may carry to the emulator: a message or stack is cut at this many characters. */
const MAX_ERROR_TEXT = 16 * 1024;
/** A custom response's headers, as JSON, at most. */
const MAX_CUSTOM_HEADERS = 64 * 1024;

function serializeError(error: unknown, loaded: Loaded): SerializedError {
  try {
    const custom = loaded.errors.CustomHttpResponseError;
    if (custom && error instanceof custom) {
      const { status, headers, body } = error as unknown as { status: unknown; headers: unknown; body: unknown };
      const headerMap = plainHeaders(headers);
      if (JSON.stringify(headerMap).length > MAX_CUSTOM_HEADERS)
        return resultError(`A CustomHttpResponseError's headers are over ${MAX_CUSTOM_HEADERS / 1024} KiB.`);
      const bodyText = JSON.stringify(body ?? null);
      const limit = config!.maxResultBytes;
      if (bodyText.length > limit || Buffer.byteLength(bodyText) > limit) {
        return resultError(
          `A CustomHttpResponseError's body is ${megabytes(Buffer.byteLength(bodyText))} of JSON, over the ${megabytes(limit)} limit.`,
        );
      }
      // The status as given: the emulator refuses one outside 200-599 with a problem naming the code.
      return {
        kind: 'user',
        name: 'CustomHttpResponseError',
        message: cut((error as Error).message),
        custom: { status: Number(status), headers: headerMap, body: JSON.parse(bodyText) as unknown },
      };
    }
    if (error instanceof Error || (typeof error === 'object' && error !== null && 'message' in error)) {
      const { name, message, stack } = error as Error;
      // By class, not by name: `class Declined extends BadRequestError {}` is a 400 too.
      const platform = Object.keys(USER_ERROR_STATUS).find(
        (known) => loaded.errors[known] !== undefined && error instanceof loaded.errors[known],
      );
      return {
        kind: 'user',
        name: typeof name === 'string' ? cut(name) : 'Error',
        message: cut(String(message)),
        ...(platform && { status: USER_ERROR_STATUS[platform]! }),
        ...(typeof stack === 'string' && { stack: cut(stack), location: locate(cut(stack), loaded.filename) }),
      };
    }
    return { kind: 'user', name: 'Error', message: cut(`a non-error was thrown: ${describeThrown(error)}`) };
  } catch {
    return { kind: 'user', name: 'Error', message: 'an error was thrown that could not be read' };
  }
}

function cut(text: string): string {
  return text.length > MAX_ERROR_TEXT
    ? `${text.slice(0, MAX_ERROR_TEXT)}… [cut at ${MAX_ERROR_TEXT} characters]`
    : text;
}

function plainHeaders(headers: unknown): Record<string, string> {
  const result: Record<string, string> = {};
  if (typeof headers !== 'object' || headers === null) return result;
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined && value !== null) result[name] = String(value);
  return result;
}
