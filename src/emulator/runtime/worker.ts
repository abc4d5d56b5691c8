/**
 * The sandbox worker: locks its realm down with SES, then runs one code version in a Compartment.
 * User code sees Node 16's safe globals and a `require` that serves only the allowlist; it never
 * sees `process`, the host's modules beyond the allowlist, or anything of the main thread, with
 * which this worker speaks only through plain messages.
 */
import 'ses';
import { readFileSync } from 'node:fs';
import { createRequire, builtinModules } from 'node:module';
import path from 'node:path';
import { format } from 'node:util';
import vm from 'node:vm';
import { parentPort } from 'node:worker_threads';
import {
  BUILTIN_ALLOWLIST,
  ERRORS_MODULE,
  type FromWorker,
  type InvokeRequest,
  type LoadRequest,
  type LogLevel,
  type RpcReply,
  type SerializedError,
  type SvcMethod,
} from './protocol.js';
import { hardenHost } from './harden-host.js';
import { neutralizeSesTriggers } from './neutralize.js';
import { USER_ERRORS_SOURCE, USER_ERROR_STATUS } from './user-errors.js';

if (!parentPort) throw new Error('the sandbox runs as a worker thread');
const port = parentPort;
const post = (message: FromWorker) => port.postMessage(message);
const WORKER_FILE = new URL(import.meta.url).pathname;

// Captured before lockdown hardens the realm: the host's own modules, for the allowlist.
const hostRequire = createRequire(import.meta.url);

lockdown({
  errorTaming: 'unsafe', // keep stacks: users need their file and line
  localeTaming: 'unsafe',
  consoleTaming: 'unsafe',
  overrideTaming: 'severe', // let user code assign e.g. `obj.toString = ...` on its own objects
  stackFiltering: 'verbose',
  errorTrapping: 'none',
  unhandledRejectionTrapping: 'none',
});

/**
 * The network user code gets is HTTPS, as the platform's allowlist says (`https`): no plain TCP.
 * `net` and `http` are refused by `require`, but their machinery is reachable through https's
 * classes (http.Agent's createConnection is net's; a TLSSocket's parent class is net.Socket), so
 * a socket connects only as the TLS socket of an HTTPS request.
 */
function restrictNetwork(): void {
  const net = hostRequire('node:net') as typeof import('node:net');
  const tls = hostRequire('node:tls') as typeof import('node:tls');
  const http = hostRequire('node:http') as typeof import('node:http');
  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function (this: import('node:net').Socket, ...args: unknown[]) {
    if (!(this instanceof tls.TLSSocket)) throw new Error('Plain TCP connections are not available in the sandbox; use https.');
    return (connect as (...a: unknown[]) => import('node:net').Socket).apply(this, args);
  } as typeof connect;
  http.Agent.prototype.createConnection = function () {
    throw new Error('Plain TCP connections are not available in the sandbox; use https.');
  };
}
restrictNetwork();

/** What user code is handed of the host, made immutable before any of it runs (see harden-host.ts). */
const HOST_GLOBALS = {
  setTimeout,
  clearTimeout,
  setInterval,
  clearInterval,
  setImmediate,
  clearImmediate,
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
  performance,
};
{
  const timeout = setTimeout(() => {}, 0);
  clearTimeout(timeout);
  const immediate = setImmediate(() => {});
  clearImmediate(immediate);
  const reachable = [...BUILTIN_ALLOWLIST, 'net', 'tls', 'http', 'events'].map((name) => hostRequire(`node:${name}`));
  hardenHost([...Object.values(HOST_GLOBALS), timeout, immediate, ...reachable]);
}

type UserErrors = Record<string, new (...args: never[]) => Error>;

interface Loaded {
  fn: (req: unknown) => unknown;
  errors: UserErrors;
  filename: string;
}

let loaded: Loaded | undefined;
let current: number | null = null;
let logBudget = 0;
let maxLogBytes = 64 * 1024;
let rpcSeq = 0;
const pendingRpc = new Map<number, { resolve: (value: unknown) => void; reject: (error: unknown) => void }>();

port.on('message', (message: LoadRequest | InvokeRequest | RpcReply) => {
  if (message.type === 'load') load(message);
  else if (message.type === 'invoke') void invoke(message);
  else settleRpc(message);
});

// Work user code left behind (a timer that throws after the call returned) must not kill the worker.
process.on('uncaughtException', (error) => log('error', [`Uncaught ${describeThrown(error)}`]));
process.on('unhandledRejection', (reason) => log('error', [`Unhandled rejection: ${describeThrown(reason)}`]));

post({ type: 'booted' });

function load(request: LoadRequest): void {
  maxLogBytes = request.maxLogBytes;
  logBudget = maxLogBytes;
  const { code, filename } = request;
  // Same line numbers as the file: the wrapper opens on the code's first line.
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${neutralizeSesTriggers(code)}\n})`;
  try {
    // As Node compiles a CommonJS module: exact lines, columns and messages for syntax errors.
    vm.compileFunction(code, ['exports', 'require', 'module', '__filename', '__dirname'], { filename });
  } catch (error) {
    post({ type: 'load-error', error: syntaxError(error as Error, filename) });
    return;
  }
  try {
    const compartment = makeCompartment();
    const errors = compartment.evaluate(USER_ERRORS_SOURCE) as UserErrors;
    Object.assign(compartment.globalThis, errors);
    const factory = compartment.evaluate(`${wrapped}\n//# sourceURL=${filename}`, EVALUATE_OPTIONS) as (...args: unknown[]) => void;
    const module = { exports: {} as unknown };
    const require = makeRequire(compartment, errors, request, path.dirname(path.resolve(request.projectDir, filename)), true);
    factory.call(module.exports, module.exports, require, module, filename, path.dirname(filename));
    if (typeof module.exports !== 'function') {
      post({
        type: 'load-error',
        error: { kind: 'load', name: 'TypeError', message: `${filename} must export a function: module.exports = async function (req) { ... } (it exports ${describeType(module.exports)})` },
      });
      return;
    }
    loaded = { fn: module.exports as Loaded['fn'], errors, filename };
    post({ type: 'loaded' });
  } catch (error) {
    if (String((error as Error)?.message).includes('SES_IMPORT_REJECTED')) {
      const line = /:(\d+)\. \(SES_IMPORT_REJECTED\)/.exec((error as Error).message)?.[1];
      post({ type: 'load-error', error: { kind: 'load', name: 'SyntaxError', message: `${filename}${line ? `:${line}` : ''}: import() is not available in the sandbox; require() an allowlisted module instead.` } });
      return;
    }
    const serialized = serializeError(error, filename);
    post({ type: 'load-error', error: { ...serialized, kind: 'load', message: `${serialized.location ? `${serialized.location}: ` : ''}${serialized.name}: ${serialized.message}` } });
  }
}

const EVALUATE_OPTIONS = {
  // Direct eval inside a compartment is the compartment's own confined eval. ("import(" and "<!--"
  // inside strings and comments are handled by neutralizeSesTriggers, without changing meaning.)
  __rejectSomeDirectEvalExpressions__: false,
};

function makeCompartment(): Compartment {
  const globals = {
    console: userConsole(),
    ...HOST_GLOBALS,
    // A new compartment's Math.random and Date.now are disabled; the realm's work.
    Math,
    Date,
    Intl,
  };
  const compartment = new Compartment({ __options__: true, globals, name: 'user' });
  // Node's `global` is the global object itself.
  compartment.globalThis.global = compartment.globalThis;
  return compartment;
}

/** `require` as user code (and the npm code it loads) sees it: the allowlist, nothing else. */
function makeRequire(compartment: Compartment, errors: UserErrors, request: LoadRequest, fromDir: string, isUser: boolean): (name: string) => unknown {
  const cache = new Map<string, unknown>();
  const allowedNames = [...BUILTIN_ALLOWLIST, ...request.npmAllowlist, ERRORS_MODULE];
  const refuse = (name: string) =>
    new Error(`Cannot require "${name}": only these modules are available: ${allowedNames.join(', ')}.`);

  const requireFrom = (dir: string, user: boolean) =>
    function require(name: string): unknown {
      if (typeof name !== 'string') throw new TypeError('require() takes a module name (a string)');
      const bare = name.startsWith('node:') ? name.slice(5) : name;
      if (name === ERRORS_MODULE) return errors;
      if (builtinModules.includes(bare)) {
        if (!(BUILTIN_ALLOWLIST as readonly string[]).includes(bare)) throw refuse(name);
        return hostRequire(bare);
      }
      const isPath = name.startsWith('.') || name.startsWith('/');
      const packageName = name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : name.split('/')[0]!;
      if (user && !isPath && (!request.npmAllowlist.includes(packageName) || name.split('/').includes('..'))) throw refuse(name);
      if (user && isPath) throw new Error(`Cannot require "${name}": user code is a single file; require allowlisted packages by name.`);
      let file: string;
      try {
        file = createRequire(path.join(dir, 'noop.js')).resolve(name, { paths: [dir, request.projectDir] });
      } catch {
        throw new Error(`Cannot find module "${name}" from ${request.projectDir}: install it in your project (npm install ${packageName}).`);
      }
      // Package code can only ever load files of installed packages, never an arbitrary path.
      if (!file.startsWith(path.join(request.projectDir, 'node_modules') + path.sep)) {
        throw new Error(`Cannot require "${name}": only files of packages under ${request.projectDir}/node_modules can be loaded.`);
      }
      return loadFile(file);
    };

  const loadFile = (file: string): unknown => {
    if (cache.has(file)) return (cache.get(file) as { exports: unknown }).exports;
    const module = { exports: {} as unknown };
    cache.set(file, module);
    const source = readFileSync(file, 'utf8');
    if (file.endsWith('.json')) {
      module.exports = JSON.parse(source);
      return module.exports;
    }
    const factory = compartment.evaluate(
      `(function (exports, require, module, __filename, __dirname) {${neutralizeSesTriggers(source.replace(/^#!.*/, ''))}\n})\n//# sourceURL=${file}`,
      EVALUATE_OPTIONS,
    ) as (...args: unknown[]) => void;
    factory.call(module.exports, module.exports, requireFrom(path.dirname(file), false), module, file, path.dirname(file));
    return module.exports;
  };

  return requireFrom(fromDir, isUser);
}

async function invoke(request: InvokeRequest): Promise<void> {
  current = request.id;
  logBudget = maxLogBytes;
  if (!loaded) {
    post({ type: 'result', id: request.id, ok: false, error: { kind: 'user', name: 'Error', message: 'no code is loaded' } });
    return;
  }
  const { args, configuration } = JSON.parse(request.payload) as { args: unknown; configuration: unknown };
  const req = { args, configuration, svc: request.svc ? svcClient(request.id, loaded.errors) : null };
  let result: unknown;
  try {
    result = await loaded.fn(req);
  } catch (error) {
    post({ type: 'result', id: request.id, ok: false, error: serializeError(error, loaded.filename) });
    return;
  }
  let value: string;
  try {
    value = JSON.stringify(result === undefined ? null : result);
  } catch (error) {
    post({ type: 'result', id: request.id, ok: false, error: { kind: 'result', name: 'TypeError', message: `The function's result is not JSON: ${(error as Error).message}` } });
    return;
  }
  post({ type: 'result', id: request.id, ok: true, value });
}

/** `req.svc`: each call is a message to the main thread, answered under the bound Application's permissions. */
function svcClient(invocation: number, errors: UserErrors) {
  const call = (method: SvcMethod, params: unknown) =>
    new Promise((resolve, reject) => {
      const id = ++rpcSeq;
      pendingRpc.set(id, {
        resolve,
        reject: (problem) => {
          const { status, detail } = problem as { status: number; detail: string };
          const name = Object.entries(USER_ERROR_STATUS).find(([, code]) => code === status)?.[0];
          const ErrorClass = (name ? errors[name] : undefined) ?? Error;
          reject(new (ErrorClass as new (message: string) => Error)(detail));
        },
      });
      post({ type: 'rpc', id, invocation, method, params: JSON.stringify(params ?? null) });
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

function settleRpc(reply: RpcReply): void {
  const pending = pendingRpc.get(reply.id);
  if (!pending) return;
  pendingRpc.delete(reply.id);
  if (reply.ok) pending.resolve(reply.value === undefined ? undefined : JSON.parse(reply.value));
  else pending.reject(reply.error);
}

/** console for user code: each line goes to the main thread tagged with the call, within a byte budget. */
function userConsole() {
  const method = (level: LogLevel) => (...args: unknown[]) => log(level, args);
  return harden({
    log: method('log'),
    info: method('info'),
    warn: method('warn'),
    error: method('error'),
    debug: method('debug'),
    trace: method('debug'),
  });
}

function log(level: LogLevel, args: unknown[]): void {
  if (logBudget <= 0) return;
  let text: string;
  try {
    text = format(...args);
  } catch (error) {
    text = `[unprintable: ${(error as Error).message}]`;
  }
  const bytes = Buffer.from(text);
  if (bytes.length > logBudget) {
    // Cut by bytes, not characters; a character cut in half becomes U+FFFD.
    text = `${bytes.subarray(0, logBudget).toString('utf8')}… [console output truncated at ${maxLogBytes} bytes]`;
    logBudget = 0;
  } else {
    logBudget -= bytes.length;
  }
  post({ type: 'log', id: current, level, text });
}

function serializeError(error: unknown, filename: string): SerializedError {
  try {
    const errors = loaded?.errors;
    const custom = errors?.CustomHttpResponseError;
    if (custom && error instanceof custom) {
      const { status, headers, body } = error as unknown as { status: unknown; headers: unknown; body: unknown };
      const validStatus = Number.isInteger(status) && (status as number) >= 100 && (status as number) <= 599 ? (status as number) : 500;
      return {
        kind: 'user',
        name: 'CustomHttpResponseError',
        message: (error as Error).message,
        custom: { status: validStatus, headers: plainHeaders(headers), body: JSON.parse(JSON.stringify(body ?? null)) },
      };
    }
    if (error instanceof Error || (typeof error === 'object' && error !== null && 'message' in error)) {
      const { name, message, stack } = error as Error;
      // By class, not by name: `class Declined extends BadRequestError {}` is a 400 too.
      const platform = Object.keys(USER_ERROR_STATUS).find((known) => errors?.[known] !== undefined && error instanceof errors[known]!);
      return {
        kind: 'user',
        name: typeof name === 'string' ? name : 'Error',
        message: String(message),
        ...(platform && { status: USER_ERROR_STATUS[platform]! }),
        ...(typeof stack === 'string' && { stack: userStack(stack), location: locate(stack, filename) }),
      };
    }
    return { kind: 'user', name: 'Error', message: `a non-error was thrown: ${describeThrown(error)}` };
  } catch {
    return { kind: 'user', name: 'Error', message: 'an error was thrown that could not be read' };
  }
}

function plainHeaders(headers: unknown): Record<string, string> {
  const result: Record<string, string> = {};
  if (typeof headers !== 'object' || headers === null) return result;
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && value !== null) result[name] = String(value);
  return result;
}

/** The stack without the sandbox's frames: what the user wrote, and the npm code it called. */
function userStack(stack: string): string {
  return stack
    .split('\n')
    .filter((line, i) => i === 0 || !/^\s+at /.test(line) || !(line.includes('node:') || line.includes(WORKER_FILE) || line.includes('/node_modules/ses/')))
    .join('\n');
}

function locate(stack: string, filename: string): string | undefined {
  const escaped = filename.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(`${escaped}:(\\d+):(\\d+)`).exec(stack);
  return match ? `${filename}:${match[1]}:${match[2]}` : undefined;
}

/** A syntax error with the file, line and column, from V8's "file:line" header and caret. */
function syntaxError(error: Error, filename: string): SerializedError {
  const lines = (error.stack ?? '').split('\n');
  const line = /:(\d+)$/.exec(lines[0] ?? '')?.[1];
  const caret = lines[2] ?? '';
  const column = caret.includes('^') ? caret.indexOf('^') + 1 : undefined;
  const location = line ? `${filename}:${line}${column !== undefined ? `:${column}` : ''}` : filename;
  const excerpt = lines[1] !== undefined && caret.includes('^') ? `\n${lines[1]}\n${caret}` : '';
  return { kind: 'load', name: 'SyntaxError', message: `${location}: SyntaxError: ${error.message}${excerpt}`, location };
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return Object.keys(value as object).length ? `an object with ${Object.keys(value as object).join(', ')}` : 'an empty object';
  return `a ${typeof value}`;
}

function describeThrown(value: unknown): string {
  if (value instanceof Error) return value.stack ? userStack(value.stack) : `${value.name}: ${value.message}`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
