/**
 * The escape catalogue: every way user code might reach the host (process, the file system, the
 * worker's own machinery, another reactor), each shown to fail with its exact outcome.
 * Needs the build (`npm run build`): the sandbox worker runs from dist/.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BUILTIN_ALLOWLIST, DEFAULT_NPM_ALLOWLIST } from '../../../src/emulator/runtime/index.js';
import { FILENAME, attempt, invoke, load, rejection, run, sharedRuntime, value } from './helpers.js';

const ALLOWED = [...BUILTIN_ALLOWLIST, ...DEFAULT_NPM_ALLOWLIST, '@svc/errors'].join(', ');
const refused = (name: string) => `Cannot require "${name}": only these modules are available: ${ALLOWED}.`;
const INERT = 'TypeError: Function.prototype.constructor is not a valid constructor.';

describe('require', () => {
  const rt = sharedRuntime();

  it.each([
    'fs',
    'child_process',
    'node:fs',
    'node:child_process',
    'fs/promises',
    'worker_threads',
    'vm',
    'module',
    'net',
    'tty',
    'inspector',
    'v8',
    'async_hooks',
  ])('refuses %s, naming it and listing the allowlist', async (name) => {
    const error = await rejection(run(rt(), `module.exports = async () => require(${JSON.stringify(name)});`));
    expect(error.status).toBe(500);
    // Where the code asked for it: its own line 1, column 30 (the wrapper not counted).
    expect(error.detail).toBe(`${FILENAME}:1:30: Error: ${refused(name)}`);
    expect(error.userStack).toContain(`${FILENAME}:1:`);
  });

  it('refuses at load time with a 422 naming the module, the allowlist and the line', async () => {
    const error = await rejection(
      load(rt(), `// top level\nconst cp = require('child_process');\nmodule.exports = async () => cp;`),
    );
    expect(error.status).toBe(422);
    expect(error.title).toBe('Code does not load');
    expect(error.detail).toMatch(new RegExp(`^${FILENAME}:2:\\d+: Error: `));
    expect(error.detail).toContain(refused('child_process'));
  });

  it('refuses paths: user code is a single file', async () => {
    for (const name of ['./lib', '../../dist/emulator/runtime/worker.js', '/etc/passwd']) {
      expect(await value(rt(), attempt(`return require(${JSON.stringify(name)});`))).toEqual({
        threw: `Error: Cannot require "${name}": user code is a single file; require allowlisted packages by name.`,
      });
    }
  });

  it('refuses a name that is not a string', async () => {
    expect(await value(rt(), attempt(`return require({ toString: () => 'fs' });`))).toEqual({
      threw: 'TypeError: require() takes a module name (a string)',
    });
  });

  it('refuses sub-paths and lookalikes of allowlisted built-ins', async () => {
    expect(await value(rt(), attempt(`return require('util/');`))).toEqual({ threw: `Error: ${refused('util/')}` });
    expect(await value(rt(), attempt(`return require('node:test');`))).toEqual({
      threw: `Error: ${refused('node:test')}`,
    });
  });
});

describe('globals', () => {
  const rt = sharedRuntime();

  it('has no host process, fetch or require-able host in the global scope; `global` is the compartment itself', async () => {
    expect(
      await value(
        rt(),
        attempt(`return [typeof process.binding, typeof process.exit, typeof process.dlopen, typeof process.kill, typeof fetch,
          global === globalThis, typeof globalThis.require, typeof WebAssembly, typeof SharedArrayBuffer, typeof Atomics,
          Object.getPrototypeOf(Object.getPrototypeOf(process)) === Object.prototype];`),
      ),
    ).toEqual({
      value: [
        'undefined',
        'undefined',
        'undefined',
        'undefined',
        'undefined',
        true,
        'undefined',
        'undefined',
        'undefined',
        'undefined',
        true,
      ],
    });
  });

  it('has no gc: the host keeps the collection it runs when idle (lib/idle-release.ts) to itself', async () => {
    expect(
      await value(
        rt(),
        attempt(`return [typeof gc, typeof globalThis.gc, Function('return typeof gc')(), eval('typeof gc'),
          (0, eval)('typeof globalThis.gc'), Object.getOwnPropertyNames(globalThis).includes('gc')];`),
      ),
    ).toEqual({ value: ['undefined', 'undefined', 'undefined', 'undefined', 'undefined', false] });
  });

  it('answers a lookup of an undeclared host global with undefined, not the host value', async () => {
    expect(
      await value(
        rt(),
        attempt(`return String(process.mainModule) + ' ' + typeof setUncaughtExceptionCaptureCallback;`),
      ),
    ).toEqual({
      value: 'undefined undefined',
    });
  });

  it("gives util's functions but no path from util to process", async () => {
    expect(
      await value(
        rt(),
        attempt(`const util = require('util');
          return [typeof util.inspect, util.inspect({ a: [1] }), util.format('%s=%d', 'x', 1), typeof util.process, typeof util.types.isPromise];`),
      ),
    ).toEqual({ value: ['function', '{ a: [ 1 ] }', 'x=1', 'undefined', 'function'] });
  });

  it('leaves no property/prototype path to the worker process or its global from anything user code can touch', async () => {
    // A breadth-first walk over own properties (getters called too) and prototypes of everything in reach.
    const walk = `
      const seen = new Set();
      const queue = roots.map(([name, root]) => [root, name]);
      const found = [];
      for (let i = 0; i < queue.length && seen.size < 200000; i++) {
        const [o, at] = queue[i];
        if ((typeof o !== 'object' && typeof o !== 'function') || o === null || seen.has(o)) continue;
        seen.add(o);
        let tag = '';
        try { tag = Object.prototype.toString.call(o); } catch {}
        // The version's own process (process-facade.ts) is handed out; any other is the host's.
        if (tag === '[object process]' && o !== process) found.push(at);
        try { if (Object.prototype.hasOwnProperty.call(o, 'process') && o.process !== process) found.push(at + ' has .process'); } catch {}
        try { queue.push([Object.getPrototypeOf(o), at + '.__proto__']); } catch {}
        let keys = [];
        try { keys = Reflect.ownKeys(o); } catch {}
        for (const k of keys) {
          let d;
          try { d = Object.getOwnPropertyDescriptor(o, k); } catch { continue; }
          if (!d) continue;
          const p = at + '.' + String(k);
          if ('value' in d) queue.push([d.value, p]);
          else {
            queue.push([d.get, p + '<get>'], [d.set, p + '<set>']);
            try { if (d.get) queue.push([d.get.call(o), p]); } catch {}
          }
        }
      }
      return { found, walked: seen.size > 1000 };`;
    const code = `module.exports = async function (req) {
      const roots = [['util', require('util')], ['buffer', require('buffer')], ['crypto', require('crypto')], ['https', require('https')],
        ['querystring', require('querystring')], ['stream', require('stream')], ['url', require('url')], ['errors', require('@svc/errors')],
        ...['http', 'path', 'events', 'zlib', 'assert', 'string_decoder', 'punycode', 'timers', 'process', 'os'].map((name) => [name, require(name)]),
        ['req', req], ['module', module], ['require', require], ['console', console], ['globalThis', globalThis],
        ['timeout', setTimeout(() => {}, 1)], ['immediate', setImmediate(() => {})], ['hash', require('crypto').createHash('sha256')],
        ['abort', new AbortController()], ['url object', new URL('https://example.com/')]];
      ${walk}
    };`;
    expect(await value(rt(), code, { args: { a: [1] } }, { svc: async () => null })).toEqual({
      found: [],
      walked: true,
    });
  });
});

describe('the Function constructor', () => {
  const rt = sharedRuntime();

  it.each([
    ['(function(){}).constructor', '(function(){}).constructor'],
    ['(async function(){}).constructor', '(async function(){}).constructor'],
    ['(function*(){}).constructor', '(function*(){}).constructor'],
    ['(async function*(){}).constructor', '(async function*(){}).constructor'],
    ['Object.getPrototypeOf(async () => {}).constructor', 'Object.getPrototypeOf(async () => {}).constructor'],
    ['console.log.constructor', 'console.log.constructor'],
    ['require.constructor', 'require.constructor'],
    ['setTimeout.constructor', 'setTimeout.constructor'],
    ['Buffer.constructor', 'Buffer.constructor'],
    ['a host object’s constructor.constructor', "require('crypto').createHash('sha256').constructor.constructor"],
    ['a host module function’s constructor', "require('util').inspect.constructor"],
    ['req.constructor.constructor', 'req.constructor.constructor'],
    ['req.args.constructor.constructor', 'req.args.constructor.constructor'],
    ['module.constructor.constructor', 'module.constructor.constructor'],
    ['an error class’s constructor', "require('@svc/errors').BadRequestError.constructor"],
  ])('%s throws instead of compiling `return process`', async (_name, expression) => {
    const outcome = await value(rt(), attempt(`const F = ${expression}; return typeof F('return process')();`), {
      args: { a: 1 },
    });
    expect(outcome).toEqual({ threw: INERT });
  });

  it('is unreachable through the constructors as `new`, too', async () => {
    expect(await value(rt(), attempt(`return new (function(){}).constructor('return process')();`))).toEqual({
      threw: INERT,
    });
  });

  it('compiles in the compartment when called as Function / new Function / Reflect.construct: only its own process there', async () => {
    expect(
      await value(
        rt(),
        attempt(`return [
          Function('return process')() === process,
          String(new Function('return typeof process.binding')()),
          Reflect.construct(Function, ['return process'])() === process,
          Function('return this')() === undefined,
          new Function('return globalThis')() === globalThis,
          new Function('return globalThis.process')() === process,
        ];`),
      ),
    ).toEqual({ value: [true, 'undefined', true, true, true, true] });
  });

  it("makes module.constructor the compartment's Object, not a host Module", async () => {
    expect(
      await value(
        rt(),
        attempt(`return [module.constructor === Object, typeof module.constructor._load, Object.keys(module)];`),
      ),
    ).toEqual({
      value: [true, 'undefined', ['exports']],
    });
  });
});

describe('eval, this and stack walking', () => {
  const rt = sharedRuntime();

  it('confines direct and indirect eval to the compartment', async () => {
    // "Direct" eval is the compartment's own eval: it sees the compartment's globals only, not the
    // caller's local scope (so not even the module's `require`).
    expect(
      await value(
        rt(),
        attempt(
          `return [eval('process') === process, (0, eval)('typeof process.binding'), (0, eval)('typeof require'), eval('typeof require'), eval('typeof Buffer')];`,
        ),
      ),
    ).toEqual({ value: [true, 'undefined', 'undefined', 'undefined', 'function'] });
  });

  it('binds top-level `this` to module.exports, and a plain call’s `this` to undefined (strict), never the global', async () => {
    const code = `const top = this;
const initial = exports;
module.exports = async function () {
  return [top === initial, top === globalThis, (function () { return this; })() === undefined, typeof (function () { return this; })()];
};`;
    expect(await value(rt(), code)).toEqual([true, false, true, 'undefined']);
  });

  it('gives nothing through arguments.callee or .caller (the code is strict)', async () => {
    const code = `module.exports = async function () {
  const out = [];
  try { out.push(typeof arguments.callee); } catch (e) { out.push(e.name); }
  function inner() { return inner.caller; }
  try { out.push(String(inner())); } catch (e) { out.push(e.name); }
  try { out.push(String(module.exports.caller)); } catch (e) { out.push(e.name); }
  return out;
};`;
    // arguments.callee throws; .caller of a strict function is not there at all.
    expect(await value(rt(), code)).toEqual(['TypeError', 'undefined', 'undefined']);
  });

  it('never calls Error.prepareStackTrace: no CallSite objects, err.stack stays a string', async () => {
    const outcome = await value(
      rt(),
      attempt(`let calls = 0;
        Error.prepareStackTrace = (e, frames) => { calls++; return frames; };
        const mine = new Error('mine');
        let host;
        try { require('crypto').createHash('no such digest'); } catch (e) { host = e; }
        return [calls, typeof mine.stack, Array.isArray(mine.stack), typeof host.stack, Array.isArray(host.stack), host.message];`),
    );
    expect(outcome).toEqual({ value: [0, 'string', false, 'string', false, 'Digest method not supported'] });
  });

  it('gives Error.captureStackTrace only a string, even with a host function as the cut-off', async () => {
    const outcome = await value(
      rt(),
      attempt(`let calls = 0;
        Error.prepareStackTrace = () => { calls++; return { frames: 'hooked' }; };
        const a = {};
        Error.captureStackTrace(a);
        const b = {};
        Error.captureStackTrace(b, setTimeout);
        return [calls, typeof a.stack, typeof b.stack];`),
    );
    expect(outcome).toEqual({ value: [0, 'string', 'string'] });
  });
});

describe('modules and syntax', () => {
  const rt = sharedRuntime();

  it('refuses a dynamic import() when the code loads, naming the line', async () => {
    for (const code of [
      `module.exports = async () => {\n  return await import('fs');\n};`,
      `module.exports = async () => {\n  return await import ('node:child_process');\n};`,
    ]) {
      const error = await rejection(load(rt(), code));
      expect(error.status).toBe(422);
      expect(error.detail).toBe(
        'reactors/test.js:2: import() is not available in the sandbox; require() an allowlisted module instead.',
      );
    }
  });

  it('refuses a static import as a 422 syntax error at its line', async () => {
    const error = await rejection(load(rt(), `// ok\nimport fs from 'fs';\nmodule.exports = async () => fs;`));
    expect(error.status).toBe(422);
    expect(error.detail).toMatch(/^reactors\/test\.js:2:1: SyntaxError: Cannot use import statement outside a module/);
  });

  it('loads code with "import(" or "<!--" inside string literals', async () => {
    const code = `const a = "import('x')";\nconst b = '<!-- comment -->';\nmodule.exports = async () => [typeof a, typeof b];`;
    expect(await value(rt(), code)).toEqual(['string', 'string']);
  });

  // SES's own evade transforms would rewrite strings too ("import('x')" -> "__import__('x')");
  // neutralize.ts rewrites only where the text is text, keeping every string's value.
  it('keeps the text of strings containing "import(" or "<!--" as written', async () => {
    const code = `module.exports = async () => ["import('x')", '<!-- c -->', \`import(\${1})\`];`;
    expect(await value(rt(), code)).toEqual(["import('x')", '<!-- c -->', 'import(1)']);
  });

  it('treats {{ }}, ${ } and % sequences in strings and logs as plain text', async () => {
    const code =
      'module.exports = async () => { const s = "{{ token_id }} ${x} %s %d {{"; console.log(s); console.log("%s", "{{ y }}"); return s; };';
    const result = await run(rt(), code);
    expect(result.value).toBe('{{ token_id }} ${x} %s %d {{');
    expect(result.logs.map((entry) => entry.text)).toEqual(['{{ token_id }} ${x} %s %d {{', '{{ y }}']);
  });
});

describe('frozen intrinsics and isolation', () => {
  const rt = sharedRuntime();

  it('refuses prototype pollution and replacing built-ins', async () => {
    const outcome = await value(
      rt(),
      `module.exports = async () => {
  const tries = {
    objectProto: () => { Object.prototype.polluted = 1; },
    arrayPush: () => { Array.prototype.push = function () { return 0; }; },
    jsonParse: () => { JSON.parse = () => ({}); },
    defineOnObjectProto: () => { Object.defineProperty(Object.prototype, 'polluted', { value: 1 }); },
    setProtoOfObjectProto: () => { Object.setPrototypeOf(Object.prototype, { polluted: 1 }); },
    functionProto: () => { Function.prototype.call = null; },
    promiseThen: () => { Promise.prototype.then = null; },
    stringProto: () => { String.prototype.polluted = 1; },
    errorCtor: () => { Error.polluted = 1; },
    bufferFrom: () => { Buffer.from = null; },
  };
  const out = {};
  for (const [name, fn] of Object.entries(tries)) {
    try { fn(); out[name] = 'succeeded'; } catch (e) { out[name] = e.name; }
  }
  out.after = [({}).polluted, [].push(1), typeof JSON.parse('{}'), ''.polluted];
  return out;
};`,
    );
    expect(outcome).toEqual({
      objectProto: 'TypeError',
      arrayPush: 'TypeError',
      jsonParse: 'TypeError',
      defineOnObjectProto: 'TypeError',
      setProtoOfObjectProto: 'TypeError',
      functionProto: 'TypeError',
      promiseThen: 'TypeError',
      stringProto: 'TypeError',
      errorCtor: 'TypeError',
      bufferFrom: 'TypeError',
      after: [null, 1, 'object', null],
    });
  });

  it('names the frozen property in the error', async () => {
    expect(await value(rt(), attempt(`Object.prototype.polluted = 1;`))).toEqual({
      threw: 'TypeError: Cannot add property polluted, object is not extensible',
    });
    expect(await value(rt(), attempt(`JSON.parse = () => 1;`))).toEqual({
      threw: "TypeError: Cannot assign to read only property 'parse' of object '[object JSON]'",
    });
  });

  it('lets no pollution attempt leak into the next invocation nor into another reactor', async () => {
    const polluter = await load(
      rt(),
      `module.exports = async () => {
  for (const f of [() => { Object.prototype.polluted = 1; }, () => { Array.prototype.push = () => 0; }, () => { JSON.parse = () => 'x'; }]) {
    try { f(); } catch {}
  }
  return [({}).polluted, [].push(1), JSON.parse('1')];
};`,
    );
    const observer = await load(
      rt(),
      `module.exports = async () => [({}).polluted, [].push(1), JSON.parse('1'), Object.isFrozen(Object.prototype)];`,
    );
    try {
      expect((await invoke(polluter)).value).toEqual([null, 1, 1]);
      expect((await invoke(polluter)).value).toEqual([null, 1, 1]);
      expect((await invoke(observer)).value).toEqual([null, 1, 1, true]);
    } finally {
      await rt().unload(polluter.id);
      await rt().unload(observer.id);
    }
  });

  it('keeps one reactor’s globals and host-module changes away from another reactor in the same Runtime', async () => {
    const writer = await load(
      rt(),
      `globalThis.shared = 'from writer';
globalThis[Symbol.for('svc.channel')] = 'secret';
const refused = [];
try { require('util').leak = 'from writer'; } catch (e) { refused.push(e.name); }
try { require('stream').prototype.leak = 'from writer'; } catch (e) { refused.push(e.name); }
module.exports = async () => [globalThis.shared, globalThis[Symbol.for('svc.channel')], refused];`,
    );
    const reader = await load(
      rt(),
      `module.exports = async () => [typeof shared, typeof globalThis.shared, typeof globalThis[Symbol.for('svc.channel')],
        typeof require('util').leak, typeof require('stream').prototype.leak, Symbol.for('svc.channel') === Symbol.for('svc.channel')];`,
    );
    try {
      // The writer's state persists across its own invocations (a warm worker) ...
      // (host modules are frozen: changing them is refused outright)
      expect((await invoke(writer)).value).toEqual(['from writer', 'secret', ['TypeError', 'TypeError']]);
      // ... but is invisible to another reactor.
      expect((await invoke(reader)).value).toEqual([
        'undefined',
        'undefined',
        'undefined',
        'undefined',
        'undefined',
        true,
      ]);
    } finally {
      await rt().unload(writer.id);
      await rt().unload(reader.id);
    }
  });

  it('hands in req, req.args and req.svc with no path to the host', async () => {
    const outcome = await value(
      rt(),
      `module.exports = async function (req) {
  const out = [];
  for (const f of [
    () => req.constructor.constructor('return process')(),
    () => req.args.constructor.constructor('return process')(),
    () => req.args.list.constructor.constructor('return process')(),
    () => req.svc.tokenize.constructor('return process')(),
    () => Object.getPrototypeOf(req.svc.tokenize).constructor('return process')(),
  ]) {
    try { out.push(typeof f()); } catch (e) { out.push(e.message); }
  }
  out.push(Object.getPrototypeOf(req) === Object.prototype, Object.getPrototypeOf(req.args) === Object.prototype, Array.isArray(req.args.list));
  return out;
};`,
      { args: { list: [1, 2] } },
      { svc: async () => null },
    );
    const inert = INERT.replace('TypeError: ', '');
    expect(outcome).toEqual([inert, inert, inert, inert, inert, true, true, true]);
  });

  it('lets a util.inspect.custom hook (Symbol.for registry) run but gives it nothing of the host', async () => {
    const result = await run(
      rt(),
      `module.exports = async () => {
  let seen;
  const o = {
    [Symbol.for('nodejs.util.inspect.custom')](depth, options, inspect) {
      seen = [typeof options.stylize, typeof inspect];
      for (const f of [() => options.stylize.constructor('return process')(), () => inspect.constructor('return process')()]) {
        try { seen.push(typeof f()); } catch (e) { seen.push(e.name); }
      }
      seen.push(Object.values(options).some((v) => v && typeof v === 'object' && 'pid' in v));
      return 'custom!';
    },
  };
  console.log(o);
  return [Symbol.for('nodejs.util.inspect.custom') === require('util').inspect.custom, seen];
};`,
    );
    expect(result.value).toEqual([true, ['function', 'function', 'TypeError', 'TypeError', false]]);
    expect(result.logs.map((entry) => entry.text)).toEqual(['custom!']);
  });
});

/**
 * Host (worker realm) objects that are not SES intrinsics stay mutable and are shared with the
 * worker's own machinery. These tests demonstrate two such channels; both are real bugs, so they
 * are marked `.fails` (they pass while the hole exists). Remove `.fails` once they are closed.
 */
describe('host prototypes shared with the worker (KNOWN ESCAPES)', () => {
  const rt = sharedRuntime();

  // SANDBOX ESCAPE (worker.ts makeRequire line 158: `return hostRequire(bare)` hands out the host's
  // builtins unhardened). require('stream') (likewise https, crypto hashes) reaches
  // EventEmitter.prototype, which the worker's `process` inherits `emit` from; patching `emit` and
  // making the worker emit (an uncaught throw in a timer -> process.emit('uncaughtException'), or
  // an unhandled rejection, or a deprecation warning) hands `process` to user code. From there
  // process.binding('spawn_sync') runs commands on the host (verified: `id` prints uid=0).
  it('cannot capture the worker process by patching EventEmitter.prototype.emit', async () => {
    const outcome = await value(
      rt(),
      `module.exports = async () => {
  const proto = Object.getPrototypeOf(require('stream').prototype);
  const emit = proto.emit;
  let captured;
  try {
    proto.emit = function (...args) {
      if (this && Object.prototype.toString.call(this) === '[object process]') captured = this;
      return emit.apply(this, args);
    };
  } catch (e) {
    return 'refused: ' + e.name;
  }
  setTimeout(() => { throw new Error('make the worker emit'); });
  await new Promise((resolve) => setTimeout(resolve, 50));
  proto.emit = emit;
  return captured ? ['captured process', typeof captured.binding, typeof captured.dlopen] : 'nothing captured';
};`,
    );
    expect(outcome).not.toEqual(['captured process', 'function', 'function']);
    expect(['nothing captured', 'refused: TypeError']).toContain(outcome);
  });

  // The EventTarget global (a host class, unhardened) is the prototype of the worker's parentPort:
  // patching its kHybridDispatch hands user code the MessagePort to the main thread, so it can
  // forge protocol messages ('log' outside the byte budget, 'rpc', 'result').
  it("cannot capture the worker's MessagePort by patching EventTarget.prototype", async () => {
    const outcome = await value(
      rt(),
      `module.exports = async (req) => {
  const proto = EventTarget.prototype;
  let port;
  const patched = [];
  for (const key of Reflect.ownKeys(proto)) {
    const d = Object.getOwnPropertyDescriptor(proto, key);
    if (key === 'constructor' || typeof d.value !== 'function') continue;
    const original = d.value;
    try {
      proto[key] = function (...args) {
        if (this && typeof this.postMessage === 'function') port = this;
        return original.apply(this, args);
      };
      patched.push(String(key));
    } catch {}
  }
  await req.svc.tokens.list({}); // the reply arrives through the port
  return port ? 'captured the port' : 'nothing captured (' + patched.length + ' patched)';
};`,
      {},
      { svc: async () => ({ data: [] }) },
    );
    expect(outcome).not.toBe('captured the port');
  });
  // POLICY BYPASS (same root cause: unhardened host builtins): `net` and `http` are refused, but
  // Object.getPrototypeOf(require('https').Agent) is http.Agent, whose prototype.createConnection is
  // net.createConnection: user code opens raw TCP sockets and speaks plain HTTP to loopback services
  // - e.g. the emulator's loopback-only admin route POST /_emulator/tenants.
  it('cannot open a raw TCP connection to a loopback HTTP server through https.Agent', async () => {
    const server = http.createServer((req, res) => res.end(`reached ${req.url}`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const outcome = await value(
      rt(),
      attempt(`const HttpAgent = Object.getPrototypeOf(require('https').Agent);
        const socket = HttpAgent.prototype.createConnection.call(new HttpAgent(), { host: '127.0.0.1', port: req.args.port });
        return await new Promise((resolve, reject) => {
          let data = '';
          socket.on('connect', () => socket.write('GET /_emulator/tenants HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n'));
          socket.on('data', (chunk) => (data += chunk));
          socket.on('end', () => resolve(data.split('\\r\\n').pop()));
          socket.on('error', reject);
        });`),
      { args: { port } },
    );
    expect(outcome).not.toEqual({ value: 'reached /_emulator/tenants' });
    expect(outcome).toHaveProperty('threw');
  });
});
