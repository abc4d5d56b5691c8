/**
 * The built-in modules `require` serves in the sandbox (compartment.ts), as the platform's Node 16
 * has them for the code it runs and the packages of its list: each Node's own where it holds no
 * capability, a facade where it would (https-facade.ts, facades.ts, process-facade.ts). All of it
 * is hardened by the host afterwards (freeze-reachable.ts).
 *
 * Which ones: the platform documents buffer, crypto, https, querystring and stream; what the
 * packages of its list require at load adds http, path, url, util, events, string_decoder, zlib,
 * assert, punycode and os (axios, node-fetch, xmlbuilder2, csv-parse, node-jose, openpgp...), and
 * `process` and `timers` are Node's globals as modules. `tty`, `net`, `child_process`,
 * `worker_threads` and the rest are not served: nothing on the list needs them at load, and each
 * reaches the host.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { type WorkOwner, cryptoFacade, ownedModule } from './facades.js';
import { httpsFacade } from './http-module.js';
import type { HttpsLink, HttpsOwner } from './https-facade.js';

const hostRequire = createRequire(import.meta.url);

/** The folder user code runs in, as the platform's runtime reports it (`process.cwd()`). */
export const USER_CWD = '/var/task';

/**
 * Modules only the allowlisted packages' own code may require, refusing every use: `fs` (form-data,
 * under axios, requires it at load, and uses it only for file streams). User code gets "Cannot require".
 */
export const PACKAGE_ONLY_MODULES = ['fs'] as const;

/** `path` with the sandbox's folder, never the host's, as what relative paths resolve against. */
function pathFacade(): object {
  const flavour = (base: typeof path.posix, root: string): Record<string, unknown> => ({
    ...base,
    resolve: (...paths: string[]) => base.resolve(root, ...paths),
    relative: (from: string, to: string) => base.relative(base.resolve(root, from), base.resolve(root, to)),
  });
  const posix = flavour(path.posix, USER_CWD);
  const win32 = flavour(path.win32, 'C:\\');
  posix.posix = posix;
  posix.win32 = win32;
  win32.posix = posix;
  win32.win32 = win32;
  return posix;
}

/** `url` whose pathToFileURL resolves a relative path against the sandbox's folder, not the host's. */
function urlFacade(): object {
  const url = hostRequire('node:url') as typeof import('node:url');
  return {
    ...url,
    pathToFileURL: (file: string, options?: object) =>
      url.pathToFileURL(path.posix.resolve(USER_CWD, String(file)), options as never),
  };
}

interface AssertionFields {
  message?: string;
  actual?: unknown;
  expected?: unknown;
  operator?: string;
  generatedMessage?: boolean;
}

/**
 * `assert.AssertionError` as user code gets it: Node's fields, on the Error the language's errors
 * extend once lockdown has run (frozen by it). Node's own AssertionError extends the realm's first
 * Error, which holds V8's stack switches (frozen by the host, as user code reaches it through Node's
 * other errors), and is not the Error user code's errors are. Made after lockdown: before it,
 * TypeError's parent is still that first Error.
 */
function userAssertionError() {
  const SharedError = Object.getPrototypeOf(TypeError) as ErrorConstructor;
  return class AssertionError extends SharedError {
    readonly code = 'ERR_ASSERTION';
    readonly generatedMessage: boolean;
    readonly actual: unknown;
    readonly expected: unknown;
    readonly operator: string | undefined;

    constructor(options: AssertionFields = {}) {
      super(options.message ?? `${String(options.actual)} ${String(options.operator)} ${String(options.expected)}`);
      this.name = 'AssertionError';
      this.generatedMessage = options.generatedMessage ?? options.message === undefined;
      this.actual = options.actual;
      this.expected = options.expected;
      this.operator = options.operator;
    }
  };
}

/**
 * `assert`: Node's checks, its failures thrown as the AssertionError above (Node's own extends the
 * realm's first Error), and a failure without a message said in words (Node's would read the
 * source of the failing call from disk, a file of the host's by the name in the stack, to quote it).
 */
function assertFacade(): object {
  const assert = hostRequire('node:assert') as typeof import('node:assert');
  const FALSY = 'The expression evaluated to a falsy value';
  const AssertionError = userAssertionError();
  const convert = (error: unknown): unknown => {
    if (!(error instanceof assert.AssertionError)) return error;
    const { message, actual, expected, operator, generatedMessage } = error;
    return new AssertionError({ message, actual, expected, operator, generatedMessage });
  };
  const wrap = (check: (...args: unknown[]) => unknown, name: string) => {
    const checked = (...args: unknown[]) => {
      if (['ok', 'assert', 'strict'].includes(name) && args.length > 0 && !args[0] && args[1] === undefined)
        args = [args[0], FALSY];
      try {
        const result = Reflect.apply(check, undefined, args);
        return result instanceof Promise ? result.catch((error: unknown) => Promise.reject(convert(error))) : result;
      } catch (error) {
        throw convert(error);
      }
    };
    Object.defineProperty(checked, 'name', { value: name });
    return checked;
  };
  const module = (from: Record<string, unknown>, name: string) => {
    const facade = wrap(from as never, name) as ((...args: unknown[]) => unknown) & Record<string, unknown>;
    for (const [key, member] of Object.entries(from))
      if (typeof member === 'function' && /^[a-z]/.test(key)) facade[key] = wrap(member as never, key);
    facade.AssertionError = AssertionError;
    return facade;
  };
  const facade = module(assert as never, 'assert');
  facade.strict = module(assert.strict as never, 'strict');
  (facade.strict as Record<string, unknown>).strict = facade.strict;
  return facade;
}

/**
 * `os` with nothing of the host: the answers of a fixed machine of the platform's kind (openpgp
 * sizes its worker pool by `os.cpus().length`). Static data (EOL, constants) is Node's.
 */
function osFacade(): object {
  const os = hostRequire('node:os') as typeof import('node:os');
  const MEMORY = 512 * 1024 * 1024;
  return {
    EOL: '\n',
    devNull: '/dev/null',
    constants: os.constants,
    arch: () => 'x64',
    platform: () => 'linux',
    type: () => 'Linux',
    release: () => '',
    version: () => '',
    endianness: () => 'LE',
    hostname: () => 'localhost',
    homedir: () => USER_CWD,
    tmpdir: () => '/tmp',
    uptime: () => 0,
    loadavg: () => [0, 0, 0],
    totalmem: () => MEMORY,
    freemem: () => MEMORY,
    cpus: () => [{ model: '', speed: 0, times: { user: 0, nice: 0, sys: 0, idle: 0, irq: 0 } }],
    networkInterfaces: () => ({}),
    userInfo: () => ({ uid: 1000, gid: 1000, username: 'sbx_user', homedir: USER_CWD, shell: null }),
  };
}

/** `fs` for the packages that require it at load: every function refuses (the sandbox has no file system). */
function refusingFs(): object {
  const fs = hostRequire('node:fs') as Record<string, unknown>;
  const facade: Record<string, unknown> = { constants: { ...(fs.constants as object) } };
  for (const name of Object.keys(fs)) {
    if (typeof fs[name] !== 'function' || !/^[a-z]/.test(name)) continue;
    facade[name] = () => {
      throw Object.assign(new Error(`fs.${name} is not available: the sandbox has no file system.`), {
        code: 'ERR_ACCESS_DENIED',
      });
    };
  }
  return facade;
}

/** Every module `require` can serve, by its bare name (`node:` prefixes are taken off before). */
export function userModules(
  owner: () => HttpsOwner | undefined,
  link: HttpsLink,
  timers: Record<string, unknown>,
): Record<string, unknown> {
  const workOwner = owner as () => WorkOwner | undefined;
  return {
    assert: assertFacade(),
    buffer: hostRequire('node:buffer'),
    crypto: cryptoFacade(workOwner),
    events: hostRequire('node:events'),
    fs: refusingFs(),
    http: httpsFacade(owner, link, 'http:'),
    os: osFacade(),
    https: httpsFacade(owner, link, 'https:'),
    path: pathFacade(),
    punycode: hostRequire('node:punycode'),
    querystring: hostRequire('node:querystring'),
    stream: hostRequire('node:stream'),
    string_decoder: hostRequire('node:string_decoder'),
    timers: { ...timers },
    url: urlFacade(),
    util: hostRequire('node:util'),
    zlib: ownedModule(hostRequire('node:zlib') as object, workOwner),
  };
}
