/**
 * The `process` user code sees (the global, and `require('process')`): the platform's Node 16 as
 * libraries read it (axios picks its Node adapter by `[object process]`, node-forge its Node path by
 * `process.versions.node`), and nothing of the sandbox process. One per code version: its `env`
 * and listeners are that version's alone. No exit, kill, abort, chdir, umask, binding, dlopen,
 * memoryUsage or any other member that reaches the host; nothing here holds Node's `process`.
 */
import { EventEmitter } from 'node:events';
import { PLATFORM_NODE_VERSION } from './node16.js';
import type { WorkOwner } from './facades.js';

/** Node 16.20.2's versions, as the platform's runtime reports them (no host library's). */
const VERSIONS = {
  node: PLATFORM_NODE_VERSION.slice(1),
  v8: '9.4.146.26-node.26',
  uv: '1.43.0',
  zlib: '1.2.13',
  brotli: '1.0.9',
  ares: '1.19.1',
  modules: '93',
  nghttp2: '1.47.0',
  napi: '8',
  llhttp: '6.0.11',
  openssl: '1.1.1v+quic',
  cldr: '41.0',
  icu: '71.1',
  tz: '2023c',
  unicode: '14.0',
};

// Taken before user code runs: the host's clock and its next-tick queue, never handed out.
const hostHrtime = process.hrtime.bind(process);
const hostHrtimeBigint = process.hrtime.bigint.bind(process.hrtime);
const hostNextTick = process.nextTick.bind(process);

export interface ProcessOptions {
  /** The call (or version's top-level code) running now: a tick belongs to it, as a timer does. */
  owner: () => WorkOwner | undefined;
  /** The version's console: where `emitWarning` writes. */
  console: { warn: (...args: unknown[]) => void };
}

function invalidArgument(name: string, expected: string): TypeError {
  return Object.assign(new TypeError(`The "${name}" argument must be of type ${expected}`), {
    code: 'ERR_INVALID_ARG_TYPE',
  });
}

/** A version's `process`. */
export function userProcess({ owner, console }: ProcessOptions): object {
  const emitter = new EventEmitter();
  const hrtime = (previous?: [number, number]) => {
    if (previous !== undefined && !Array.isArray(previous)) throw invalidArgument('time', 'an instance of Array');
    return previous === undefined ? hostHrtime() : hostHrtime([Number(previous[0]), Number(previous[1])]);
  };
  hrtime.bigint = () => hostHrtimeBigint();
  return Object.defineProperties(emitter, {
    [Symbol.toStringTag]: { value: 'process' },
    title: { value: 'node', writable: true, enumerable: true },
    version: { value: PLATFORM_NODE_VERSION, enumerable: true },
    versions: { value: Object.freeze({ ...VERSIONS }), enumerable: true },
    release: {
      value: Object.freeze({ name: 'node', lts: 'Gallium' }),
      enumerable: true,
    },
    platform: { value: 'linux', enumerable: true },
    arch: { value: 'x64', enumerable: true },
    argv: { value: ['/usr/local/bin/node', '/var/task/index.js'], writable: true, enumerable: true },
    argv0: { value: 'node', enumerable: true },
    execArgv: { value: [], writable: true, enumerable: true },
    execPath: { value: '/usr/local/bin/node', writable: true, enumerable: true },
    // The platform documents no environment variables for reactor code: configuration is how it gets values.
    env: { value: {}, writable: true, enumerable: true },
    pid: { value: 1, enumerable: true },
    ppid: { value: 0, enumerable: true },
    exitCode: { value: undefined, writable: true, enumerable: true },
    browser: { value: false, enumerable: false },
    cwd: { value: () => '/var/task', writable: true, enumerable: true },
    hrtime: { value: hrtime, writable: true, enumerable: true },
    uptime: { value: () => performance.now() / 1000, writable: true, enumerable: true },
    nextTick: {
      value: (callback: unknown, ...args: unknown[]) => {
        if (typeof callback !== 'function') throw invalidArgument('callback', 'function');
        const starter = owner();
        // A finished call's work goes with it, as its timers do.
        if (!starter || starter.finished) return;
        hostNextTick(() => {
          if (!starter.finished) Reflect.apply(callback, undefined, args);
        });
      },
      writable: true,
      enumerable: true,
    },
    emitWarning: {
      value: (warning: unknown, type?: unknown) => {
        const error = warning instanceof Error ? warning : undefined;
        const name = error?.name ?? (typeof type === 'string' ? type : (type as { type?: string })?.type) ?? 'Warning';
        console.warn(`(node) ${name}: ${error ? error.message : String(warning)}`);
      },
      writable: true,
      enumerable: true,
    },
  });
}
