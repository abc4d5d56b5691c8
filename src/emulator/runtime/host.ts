/**
 * The sandbox process: runs the code versions of one tenant (or one owner), each in an SES
 * Compartment of its own, in a Node process that the emulator started with no file descriptor of its own but a channel
 * (fd 3), under Node's permission model (see sandbox-process.ts for the flags). User code sees
 * Node 16's safe globals (node16.ts), a `process` of its own (process-facade.ts) and a `require`
 * that serves facades of the allowlisted modules (user-modules.ts); it never sees the sandbox's
 * `process`, a Node object of the network stack, or anything of the emulator.
 */
import 'ses';
import { Socket } from 'node:net';
import { releaseWhenIdle } from '../../lib/idle-release.js';
import { AsyncOwner } from './async-owner.js';
import { UserConsole } from './user-console.js';
import { IdleWatch } from './idle-watch.js';
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
} from './process-lockdown.js';
import type { WorkOwner } from './facades.js';
import { HttpsLink, type HttpsOwner, SandboxRequest, SandboxResponse } from './https-facade.js';
import { Agent } from './http-module.js';
import { lockdownAsNode16 } from './node16.js';
import { userProcess } from './process-facade.js';
import { userModules } from './user-modules.js';
import { freezeReachable } from './freeze-reachable.js';
import {
  MAX_INBOUND_FRAME_BYTES,
  type FromSandbox,
  type InitRequest,
  type InvokeRequest,
  type ToSandbox,
} from './protocol.js';
import { describeThrown, prepareUserStack } from './stacks.js';
import { TimerHandle, sandboxTimers } from './timers.js';
import type { CallLogBudget } from './log-budget.js';
import { resultError, resultFrame, serializeError, cut } from './results.js';
import { SvcCalls } from './svc-client.js';
import { VersionClocks } from './user-date.js';

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
  /** How far its tenant's clock is ahead of real time: what `Date` in its code adds. */
  clockOffsetMs: number;
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
/** The token each call or version runs under, to end its work under it. */
const tokens = new WeakMap<TimerOwner, object>();

type TimerOwner = HttpsOwner;

/**
 * Calls that returned with `crypto` work of theirs still on the thread pool, and when: its callback
 * will be dropped, but the work itself runs on (a billion pbkdf2 iterations, for minutes). Past a
 * moment's grace, the process is replaced before its next call.
 */
const workLeftBehind = new Map<WorkOwner, number>();

function current(): Invocation | undefined {
  const token = context.get();
  return typeof token === 'object' && token !== null ? records.get(token) : undefined;
}

/** What `Date` in each version's code adds to real time: its tenant's clock, sent with each call. */
const clocks = new VersionClocks(() => current()?.clockOffsetMs);

function timerOwner(): TimerOwner | undefined {
  const token = context.get();
  return typeof token === 'object' && token !== null ? (records.get(token) ?? versionRecords.get(token)) : undefined;
}

/** The host's clock, taken before user code could pin the `performance` it is handed. */
const now = performance.now.bind(performance);

closeInheritedDescriptors();
// Buffer.allocUnsafe and small Buffer.from() share an 8 KiB pool; with it, one call could read
// text another call (or the console) left there. No pool, and --zero-fill-buffers for the rest.
Buffer.poolSize = 0;
restrictNetwork();

// The realm's first Error, which Node's own errors extend and whose stack switches V8 reads: frozen below.
const FirstError = Error;
lockdownAsNode16();
// Hardened below with the rest: every compartment's Error hands it out, one object for all of them.
Error.prepareStackTrace = prepareUserStack as NonNullable<ErrorConstructor['prepareStackTrace']>;

// What user code is handed of the host: the globals, and the modules `require` serves. A timer a
// call sets belongs to it: cleared when the call ends, so that no call leaves work running (a
// spinning interval) in the process. Top-level code's timers stay; the emulator's probe recycles
// a process that keeps a core busy between calls.
const { timeoutSignal, ...TIMERS } = sandboxTimers((clear) => {
  const owner = timerOwner();
  // Work of nobody's (no call's, no version's) would outlive everything: refused as a finished call's.
  if (!owner || owner.finished) return false;
  owner.timers.add(clear);
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
// User code's requests go over the channel (made below) to the emulator, which sends them out.
const httpsLink = new HttpsLink((message) => post(message));
const MODULES = userModules(timerOwner, httpsLink, TIMERS);
confineProcessState();
const writableSlots = freezeReachable(
  [
    ...Object.values(HOST_GLOBALS),
    ...Object.values(MODULES),
    Intl,
    FirstError,
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
/** How busy the process is with no call running. */
const idle = new IdleWatch(() => invocations.size > 0);

const channel = new Channel<ToSandbox, FromSandbox>(
  new Socket({ fd: 3, readable: true, writable: true }),
  MAX_INBOUND_FRAME_BYTES,
  {
    message: onMessage,
    // The emulator is gone (or stopped us): nothing is left to do.
    broken: () => process.exit(0),
    // How busy the process was before a message came, not counting the reading of it (5 MB of JSON).
    frameStarts: () => {
      if (invocations.size === 0) idle.atArrival = idle.report();
    },
  },
);
const post = (message: FromSandbox) => channel.send(message);
const svcCalls = new SvcCalls(post, () => config?.maxSvcInFlight ?? 0);
const userConsole = new UserConsole(post, current, now);

// Work user code left behind (a timer that throws after the call returned) must not end the process.
process.on('uncaughtException', (error) => userConsole.log('error', [`Uncaught ${describeThrown(error)}`]));
process.on('unhandledRejection', (reason) =>
  userConsole.log('error', [`Unhandled rejection: ${describeThrown(reason)}`]),
);

post({ type: 'booted' });
// Memory the heap grew under a burst of calls or reloads goes back once the process is quiet: never
// while a call is under way (one waiting on I/O leaves the event loop quiet). The collection is the
// process's own work, not work a call left behind: the busy-while-idle watch starts again after it.
// It is held here, out of reach of user code (see idle-release.ts).
releaseWhenIdle({
  isIdle: () => invocations.size === 0 && svcCalls.inFlight === 0,
  onRelease: () => {
    idle.restart();
  },
});

function onMessage(message: ToSandbox): void {
  switch (message.type) {
    case 'init':
      config = message;
      userConsole.init(message);
      return;
    case 'load': {
      if (!config) return;
      // The idle time before it is judged first: the compiling that follows is work asked for.
      if (invocations.size === 0) idle.judge(idle.report());
      userConsole.loading = message.vid;
      const token = Object.freeze(Object.create(null) as object);
      const owner: TimerOwner = { finished: false, timers: new Set(), jobs: 0, vid: message.vid };
      versionRecords.set(token, owner);
      tokens.set(owner, token);
      const versionConsole = userConsole.forVersion(message.vid);
      const outcome = context.run(token, () =>
        loadCode(
          message,
          config!,
          MODULES,
          {
            ...HOST_GLOBALS,
            performance: userPerformance(),
            Date: clocks.dateFor(message.vid),
            process: userProcess({ owner: timerOwner, console: versionConsole }),
          },
          versionConsole,
        ),
      );
      userConsole.loading = null;
      if ('error' in outcome) {
        endTimers(owner);
        post({ type: 'load-error', vid: message.vid, error: outcome.error });
      } else {
        versions.set(message.vid, outcome.loaded);
        versionTimers.set(message.vid, owner);
        post({ type: 'loaded', vid: message.vid });
      }
      // Compiling is work asked for, not work left behind.
      if (invocations.size === 0) idle.restart();
      return;
    }
    case 'unload': {
      versions.delete(message.vid);
      clocks.unloaded(message.vid);
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
      if (invocations.size === 0) idle.restart();
      return;
    }
    case 'probe': {
      const report = idle.report();
      idle.judge(report);
      post({ type: 'probe', seq: message.seq, idleCpuMs: report.idleCpuMs, idleWallMs: report.idleWallMs });
      if (invocations.size === 0) idle.restart();
      return;
    }
    case 'rpc-result':
      svcCalls.settle(message);
      return;
    default:
      httpsLink.receive(message);
  }
}

/** Its timers are cleared, and any it sets from now on are cleared at once. */
function endTimers(owner: TimerOwner): void {
  owner.finished = true;
  const ends = [...owner.timers];
  owner.timers.clear();
  // Under the owner's own token: what ending its work sets off (a destroyed request's 'error'
  // event, and whatever its listeners start) is the finished owner's, refused, never nobody's.
  const token = tokens.get(owner);
  const endAll = () => {
    for (const end of ends) end();
  };
  if (token) context.run(token, endAll);
  else endAll();
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
  // (A debugger's pause between calls, with `inspecting`, would look like such work: not judged.)
  if (
    (invocations.size === 0 &&
      !config.inspecting &&
      idle.atArrival &&
      idle.judge(idle.atArrival) >= config.busyForMs) ||
    leftBehindFor(config.leftWorkGraceMs)
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
    logBudget: userConsole.callBudget(),
    svcInFlight: 0,
    cancelled: false,
    finished: false,
    timers: new Set(),
    jobs: 0,
    clockOffsetMs: request.clockOffsetMs ?? 0,
  };
  clocks.called(request.vid, invocation.clockOffsetMs);
  invocations.set(request.id, invocation);
  const token = Object.freeze(Object.create(null) as object);
  records.set(token, invocation);
  tokens.set(invocation, token);
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
    if (!invocation.cancelled && invocations.size === 0) idle.restart();
  }
}

/** The call's outcome: a message, or a result's frame written out (its value is JSON already). */
async function run(loaded: Loaded, request: InvokeRequest, invocation: Invocation): Promise<FromSandbox | string> {
  const { args, configuration } = request;
  const req = { args, configuration, svc: request.svc ? svcCalls.clientFor(invocation, loaded) : null };
  let result: unknown;
  try {
    // Called as a plain function: `this` is undefined, never an object of the host.
    result = await Reflect.apply(loaded.fn, undefined, [req]);
  } catch (error) {
    return { type: 'result', id: request.id, ok: false, error: serializeError(error, loaded, config!.maxResultBytes) };
  }
  return resultFrame(request.id, result, config!.maxResultBytes);
}
