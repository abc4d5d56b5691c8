/**
 * What the sandbox process does to itself before user code runs: descriptors it should not hold,
 * the network stack behind the facades, and the host objects user code reaches without being
 * handed them (whose prototypes are frozen with the rest).
 */
import { closeSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { WritableSlot } from './freeze-reachable.js';

const hostRequire = createRequire(import.meta.url);

/**
 * The emulator passes this process its stdio and the channel only, but a descriptor the emulator
 * itself inherited without close-on-exec (from a shell, a CI runner) would pass on too. Node and
 * libuv open theirs close-on-exec, so any other descriptor above the channel came from outside: close it.
 */
export function closeInheritedDescriptors(): void {
  const CLOSE_ON_EXEC = 0o2000000;
  let descriptors: string[];
  try {
    descriptors = readdirSync('/proc/self/fdinfo');
  } catch {
    return; // no /proc (macOS, Windows): nothing to read the flags from
  }
  for (const name of descriptors) {
    const fd = Number(name);
    if (!(fd > 3)) continue;
    try {
      const flags = Number.parseInt(
        /flags:\s+(\d+)/.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1] ?? '',
        8,
      );
      if (!(flags & CLOSE_ON_EXEC)) closeSync(fd);
    } catch {
      // gone meanwhile (the directory listing's own descriptor)
    }
  }
}

/**
 * Defence behind the facades: this process makes no connection and never listens. User code's
 * `https` requests go out from the emulator (https-facade.ts); no socket of the network stack is
 * ever made here, and none could connect if user code reached the classes.
 */
export function restrictNetwork(): void {
  const net = hostRequire('node:net') as typeof import('node:net');
  const http = hostRequire('node:http') as typeof import('node:http');
  const https = hostRequire('node:https') as typeof import('node:https');
  const refuse = () => {
    throw new Error('Network connections are not available in the sandbox; https requests go out from the emulator.');
  };
  net.Socket.prototype.connect = refuse as never;
  net.Server.prototype.listen = function () {
    throw new Error('Listening is not available in the sandbox.');
  };
  http.Agent.prototype.createConnection = refuse as never;
  https.Agent.prototype.createConnection = refuse as never;
}

/** Instances whose prototypes user code reaches without naming them (a timer handle, an abort reason). */
export function hostInstances(): unknown[] {
  const timeout = setTimeout(() => {}, 0);
  clearTimeout(timeout);
  const immediate = setImmediate(() => {});
  clearImmediate(immediate);
  const interval = setInterval(() => {}, 1000);
  clearInterval(interval);
  const controller = new AbortController();
  controller.abort();
  const reachable = ['net', 'tls', 'http', 'https', 'events', 'stream', 'crypto'].map((name) =>
    hostRequire(`node:${name}`),
  );
  return [timeout, immediate, interval, controller.signal.reason, ...reachable, ...madeAtRunTime()];
}

/**
 * Instances of Node's classes that no module exports, but that user code gets from a call (a key, a
 * stream, an error a failed connect throws): made once here, so that their prototype chains are
 * frozen with the rest. The code of a tenant's owners shares the process: a prototype one could
 * patch would spy on the others (the headers of another reactor's requests, the keys it exports).
 */
function madeAtRunTime(): unknown[] {
  const crypto = hostRequire('node:crypto') as typeof import('node:crypto');
  const stream = hostRequire('node:stream') as typeof import('node:stream');
  const util = hostRequire('node:util') as Record<string, (...args: unknown[]) => unknown>;
  const { Blob } = hostRequire('node:buffer') as typeof import('node:buffer');
  const { made, attempt } = collector();
  attempt(() => crypto.createSecretKey(Buffer.alloc(16)));
  attempt(() => {
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ed25519');
    return [privateKey, publicKey];
  });
  attempt(() => crypto.createECDH('prime256v1'));
  attempt(() => crypto.createDiffieHellmanGroup('modp14'));
  attempt(() => crypto.createSign('sha256'));
  attempt(() => crypto.createVerify('sha256'));
  attempt(() => crypto.createHmac('sha256', 'k'));
  attempt(() => crypto.createCipheriv('aes-128-gcm', Buffer.alloc(16), Buffer.alloc(12)));
  attempt(() => crypto.createDecipheriv('aes-128-gcm', Buffer.alloc(16), Buffer.alloc(12)));
  attempt(() => util._exceptionWithHostPort!(-111, 'connect', '127.0.0.1', 1));
  attempt(() => util._errnoException!(-2, 'open'));
  attempt(() => {
    const readable = new Blob(['x']).stream();
    return [readable, readable.getReader(), new WritableStream().getWriter(), new TransformStream()];
  });
  attempt(() => stream.Duplex.from(async function* () {}));
  attempt(() => stream.Readable.from([]));
  attempt(() =>
    (stream as unknown as { compose: (...s: unknown[]) => unknown }).compose(
      new stream.PassThrough(),
      new stream.PassThrough(),
    ),
  );
  attempt(() => {
    const passThrough = new stream.PassThrough();
    passThrough.on('error', () => {});
    stream.addAbortSignal(AbortSignal.abort(), passThrough);
    return passThrough;
  });
  attempt(() => new (hostRequire('node:string_decoder').StringDecoder)('utf8'));
  attempt(() => new (hostRequire('node:util') as typeof import('node:util')).MIMEType('text/plain'));
  attempt(() => webStreams());
  attempt(() => {
    const duplex = (stream.Duplex as unknown as { toWeb(d: unknown): { readable: unknown; writable: unknown } }).toWeb(
      new stream.PassThrough(),
    );
    return [duplex.readable, duplex.writable];
  });
  attempt(() => new URLSearchParams('a=1'));
  attempt(() => new stream.PassThrough());
  // What their iterators are: each a class (or generator) of its own, whose prototype another
  // owner's `for (... of ...)` and `for await` would run through.
  const iterators: unknown[] = [];
  for (const instance of made.flat()) iterators.push(...iteratorsOf(instance));
  return [...made.flat(), ...iterators];
}

/** The web streams' readers, writers and controllers, of every kind (byte streams, BYOB, tee). */
function webStreams(): unknown[] {
  const { made, attempt } = collector();
  attempt(() => new ReadableStream({ start: (controller) => void made.push(controller) }).tee());
  attempt(() => new ReadableStream().values());
  attempt(() => {
    const bytes = new ReadableStream({
      type: 'bytes',
      start: (controller) => void made.push(controller),
      pull: (controller) => {
        made.push((controller as ReadableByteStreamController).byobRequest);
        (controller as ReadableByteStreamController).close();
      },
    });
    const byob = bytes.getReader({ mode: 'byob' });
    byob.read(new Uint8Array(1)).catch(() => {});
    return byob;
  });
  attempt(() => new WritableStream({ start: (controller) => void made.push(controller) }).getWriter());
  attempt(() => new TransformStream({ start: (controller) => void made.push(controller) }));
  attempt(() => [new TextEncoderStream(), new TextDecoderStream()]);
  return made.flat().filter((value) => value !== undefined && value !== null);
}

/** What `attempt` makes, or the error it throws instead (Node's errors have classes of their own too). */
function collector(): { made: unknown[]; attempt: (make: () => unknown) => void } {
  const made: unknown[] = [];
  return {
    made,
    attempt(make) {
      try {
        made.push(make());
      } catch (error) {
        made.push(error);
      }
    },
  };
}

/** The iterators an object hands out (`[Symbol.iterator]`, `[Symbol.asyncIterator]`, entries, keys, values). */
function iteratorsOf(object: unknown): unknown[] {
  if (typeof object !== 'object' || object === null) return [];
  const found: unknown[] = [];
  for (const key of [Symbol.iterator, Symbol.asyncIterator, 'entries', 'keys', 'values'] as const) {
    const method = (object as Record<PropertyKey, unknown>)[key];
    if (typeof method !== 'function') continue;
    try {
      const iterator = Reflect.apply(method, object, []) as { return?: () => unknown } | undefined;
      found.push(iterator);
      // A generator's: done with, without running its body on.
      Promise.resolve(iterator?.return?.()).catch(() => {});
    } catch {
      // not an iterable of this kind
    }
  }
  return found;
}

/**
 * Instances Node makes only asynchronously (a CryptoKey, the AbortError a stream gets): awaited
 * once at start, before any code loads.
 */
export async function madeAsynchronously(): Promise<unknown[]> {
  const crypto = hostRequire('node:crypto') as typeof import('node:crypto');
  const stream = hostRequire('node:stream') as typeof import('node:stream');
  const made: unknown[] = [];
  made.push(await crypto.webcrypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, true, ['sign']));
  made.push(
    await new Promise((resolve) => {
      const passThrough = new stream.PassThrough();
      passThrough.on('error', resolve);
      stream.addAbortSignal(AbortSignal.abort(), passThrough);
    }),
  );
  // A byte stream's BYOB request exists only inside `pull`, while a reader waits.
  let request: unknown;
  await new ReadableStream({
    type: 'bytes',
    pull(controller) {
      request = controller.byobRequest;
      controller.byobRequest?.respond(1);
    },
  })
    .getReader({ mode: 'byob' })
    .read(new Uint8Array(1));
  made.push(request);
  return made;
}

/**
 * Node throws errors of classes of its own (one per code), which user code can catch and so reach.
 * Each class's prototype is frozen here by provoking the common ones of the allowlisted modules.
 */
export function nodeErrors(): unknown[] {
  const attempts: (() => unknown)[] = [
    () => Buffer.alloc(-1),
    () => Buffer.from({} as never),
    () => Buffer.alloc(1).readUInt8(4),
    () => Buffer.alloc(1).toString('nope' as never),
    () => new URL('no url'),
    () => new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xff])),
    () => atob('*'),
    () => (hostRequire('node:crypto') as typeof import('node:crypto')).createHash('nope'),
    () => (hostRequire('node:util') as typeof import('node:util')).promisify(1 as never),
    () => setTimeout(1 as never),
  ];
  const errors: unknown[] = [];
  for (const attempt of attempts) {
    try {
      attempt();
    } catch (error) {
      errors.push(error);
    }
  }
  return [...errors, ...nodeErrorClasses()];
}

/**
 * Every class of Node's errors, one per code (281 on Node 20), from Node's own table: the sandbox
 * starts with --expose-internals for this read alone (user code's `require` never reaches Node's
 * loader; compartment.ts). Without the flag (a host started otherwise), only the provoked ones.
 */
function nodeErrorClasses(): unknown[] {
  try {
    return Object.values((hostRequire('internal/errors') as { codes: Record<string, unknown> }).codes);
  } catch {
    return [];
  }
}

/**
 * Node's switches of process-wide state that user code reaches through the allowlisted modules,
 * turned off: in a process the code of several owners shares, one owner's setting would be the
 * others'. `stream.setDefaultHighWaterMark` (every stream's buffer), `EventEmitter.setMaxListeners`
 * without targets (every emitter's default), `buffer.INSPECT_MAX_BYTES`, and the lazy
 * `EventEmitterAsyncResource`, whose AsyncResource runs code in the async context it was made in (a
 * call's work as another's). (`util.inspect.defaultOptions` is refused by freezing the object its
 * setter assigns into.)
 */
export function confineProcessState(): void {
  const stream = hostRequire('node:stream') as typeof import('node:stream') & Record<string, unknown>;
  const events = hostRequire('node:events') as typeof import('node:events');
  const refuse = (what: string, instead: string) => () => {
    throw new TypeError(`${what} changes the whole sandbox process and is not available; ${instead}.`);
  };
  stream.setDefaultHighWaterMark = refuse('stream.setDefaultHighWaterMark', 'pass highWaterMark to the stream instead');
  const setMaxListeners = events.setMaxListeners;
  events.setMaxListeners = function (this: unknown, n?: number, ...targets: unknown[]) {
    if (targets.length === 0)
      refuse('EventEmitter.setMaxListeners without targets', 'call emitter.setMaxListeners(n) instead')();
    return Reflect.apply(setMaxListeners, this, [n, ...targets]);
  } as typeof setMaxListeners;
  const buffer = hostRequire('node:buffer') as typeof import('node:buffer');
  const inspectBytes = Object.getOwnPropertyDescriptor(buffer, 'INSPECT_MAX_BYTES');
  if (inspectBytes?.configurable)
    Object.defineProperty(buffer, 'INSPECT_MAX_BYTES', {
      get: inspectBytes.get,
      set: refuse('buffer.INSPECT_MAX_BYTES', 'format the bytes yourself'),
      enumerable: true,
      configurable: false,
    });
  Object.defineProperty(events, 'EventEmitterAsyncResource', {
    get: refuse('EventEmitterAsyncResource', 'use EventEmitter'),
    enumerable: true,
    configurable: false,
  });
}

/**
 * The `performance` a code version gets, its own: the clock, and nothing of the process-wide
 * timeline (marks and measures another owner's code would see).
 */
export function userPerformance(): object {
  return {
    now: () => performance.now(),
    timeOrigin: performance.timeOrigin,
    toJSON: () => ({ timeOrigin: performance.timeOrigin }),
  };
}

/**
 * Process-wide settings that cannot be frozen: Node's defaults of every EventEmitter
 * (`EventEmitter.defaultMaxListeners`, `captureRejections`: accessors that can be neither removed
 * nor frozen) and the primitives left writable on prototypes
 * (`slots`, freezeReachable: EventEmitter's kCapture). Read once at start; `reset()` puts them back
 * before and after every call, so that one owner's change reaches another owner's call only while
 * both run at once. `intact()` is false once user code made a slot read-only (every new emitter
 * would then throw): the process is replaced.
 */
export function processDefaults(slots: readonly WritableSlot[]): { reset(): void; intact(): boolean } {
  const defaults = takeDefaults(slots);
  current = defaults;
  return defaults;
}

/** The defaults the process read at start (processDefaults), for the timers to put back after each callback. */
let current: { reset(): void } | undefined;

export function resetProcessDefaults(): void {
  current?.reset();
}

function takeDefaults(slots: readonly WritableSlot[]): { reset(): void; intact(): boolean } {
  const events = hostRequire('node:events') as typeof import('node:events');
  const maxListeners = events.defaultMaxListeners;
  const captureRejections = events.captureRejections;
  const intact = () => slots.every(({ object, key }) => Reflect.getOwnPropertyDescriptor(object, key)?.writable);
  return {
    intact,
    reset() {
      if (!intact()) return;
      for (const { object, key, value } of slots)
        if (!Object.is(Reflect.get(object, key), value)) Reflect.set(object, key, value);
      if (events.defaultMaxListeners !== maxListeners) events.defaultMaxListeners = maxListeners;
      if (events.captureRejections !== captureRejections) events.captureRejections = captureRejections;
    },
  };
}
