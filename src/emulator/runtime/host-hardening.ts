/**
 * What the sandbox process does to itself before user code runs: descriptors it should not hold,
 * the network stack behind the facades, and the host objects user code reaches without being
 * handed them (whose prototypes are frozen with the rest).
 */
import { closeSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

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

/** Set while the facade's own agent opens a connection: the only connect() allowed. */
let outbound = false;

/**
 * Defence behind the facades: the only outbound connection this process makes is the TLS socket of
 * a facade's request, and it never listens. (User code reaches neither class; this holds if it did.)
 */
export function restrictNetwork(): void {
  const net = hostRequire('node:net') as typeof import('node:net');
  const tls = hostRequire('node:tls') as typeof import('node:tls');
  const http = hostRequire('node:http') as typeof import('node:http');
  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function (this: import('node:net').Socket, ...args: unknown[]) {
    if (!(this instanceof tls.TLSSocket) || !outbound)
      throw new Error('Plain TCP connections are not available in the sandbox; use https.');
    return (connect as (...a: unknown[]) => import('node:net').Socket).apply(this, args);
  } as typeof connect;
  net.Server.prototype.listen = function () {
    throw new Error('Listening is not available in the sandbox.');
  };
  http.Agent.prototype.createConnection = function () {
    throw new Error('Plain TCP connections are not available in the sandbox; use https.');
  };
  const https = hostRequire('node:https') as typeof import('node:https');
  const createTls = https.Agent.prototype.createConnection;
  https.Agent.prototype.createConnection = function (this: unknown, ...args: unknown[]) {
    outbound = true;
    try {
      return (createTls as (...a: unknown[]) => unknown).apply(this, args);
    } finally {
      outbound = false;
    }
  } as typeof createTls;
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
  return [timeout, immediate, interval, controller.signal.reason, ...reachable];
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
  return errors;
}
