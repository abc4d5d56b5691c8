/**
 * The code of one tenant shares a sandbox process, each version in a Compartment of its own: what
 * one owner can reach of another there (docs/sandbox.md), the work a call owns, deletion, and the
 * budget shared fairly between tenants. Needs the build (`npm run build`).
 */
import { describe, expect, it } from 'vitest';
import type { Runtime } from '../../../src/emulator/runtime/index.js';
import { eventually } from '../../helpers/wait.js';
import { tlsServer } from './attack-kit.js';
import type { InvokeResult } from '../../../src/emulator/runtime/index.js';
import { freshId, invoke, rejection, runtime, sharedRuntime, sleep } from './helpers.js';

/** What a call answered. */
async function answer(call: Promise<InvokeResult>): Promise<unknown> {
  return (await call).value;
}

/** Loads `code` as a reactor of `tenant` (a fresh id). */
function loadFor(rt: Runtime, tenant: string, code: string) {
  return rt.load({ id: freshId(), version: 1, code, filename: 'reactors/test.js', tenant });
}

/**
 * Errors that Node's internals (and the language's) throw at user code, caught: each one's prototype
 * chain and class, up to the Error they extend (the realm's first Error for Node's own classes), are
 * as reachable as a module. An error a call does not throw in this Node is left out.
 */
const CAUGHT = `const caught = async () => {
  const found = [];
  const attempt = async (label, make) => { try { await make(); } catch (error) { found.push([label, error]); } };
  const stream = require('stream');
  const events = require('events');
  const zlib = require('zlib');
  const crypto = require('crypto');
  await attempt('Buffer.alloc', () => Buffer.alloc(-1));
  await attempt('Buffer.from', () => Buffer.from({}));
  await attempt('util.promisify', () => require('util').promisify(1));
  await attempt('util.TextDecoder', () => new (require('util').TextDecoder)('utf-8', { fatal: true }).decode(new Uint8Array([0xff])));
  await attempt('stream.addAbortSignal', () => new Promise((resolve, reject) => {
    const s = new stream.PassThrough();
    s.on('error', reject);
    stream.addAbortSignal(AbortSignal.abort(), s);
  }));
  await attempt('stream.finished', () => stream.promises.finished(new stream.PassThrough().destroy()));
  await attempt('stream.write', () => new Promise((resolve, reject) => {
    const s = new stream.PassThrough();
    s.end();
    s.write('x', (error) => (error ? reject(error) : resolve()));
  }));
  await attempt('zlib.inflateSync', () => zlib.inflateSync(Buffer.from('not deflated')));
  await attempt('zlib.inflate', () => new Promise((resolve, reject) =>
    zlib.inflate(Buffer.from('not deflated'), (error) => (error ? reject(error) : resolve()))));
  await attempt('crypto.createHash', () => crypto.createHash('nope'));
  await attempt('crypto.createPrivateKey', () => crypto.createPrivateKey('not a key'));
  await attempt('crypto.subtle', () => crypto.webcrypto.subtle.importKey('raw', new Uint8Array(1), { name: 'nope' }, false, []));
  await attempt('events.emit', () => new events.EventEmitter().emit('error', 'unhandled'));
  await attempt('events.once', () => events.once(new events.EventEmitter(), 'x', { signal: AbortSignal.abort() }));
  await attempt('http.request', () => require('http').request({ hostname: 'x', headers: { 'bad header': 'x' } }));
  await attempt('http.validateHeaderName', () => require('http').validateHeaderName(''));
  await attempt('url', () => new URL('no url'));
  await attempt('url.fileURLToPath', () => require('url').fileURLToPath('http://x'));
  await attempt('string_decoder', () => new (require('string_decoder').StringDecoder)('nope'));
  await attempt('assert', () => require('assert').ok(false));
  await attempt('atob', () => atob('*'));
  await attempt('AbortSignal.abort', () => { throw AbortSignal.abort().reason; });
  await attempt('AggregateError', () => Promise.any([]));
  await attempt('timers', () => setTimeout(1));
  return found;
};`;

/**
 * Walks everything user code reaches from its globals, the allowlisted modules and the errors Node
 * throws at it (prototypes, properties, what static getters answer) and lists what is not frozen,
 * and every setter of a module or class that takes a value (prototype accessors act on their
 * instances and are skipped).
 */
const WALK = `${CAUGHT}
module.exports = async () => {
  const roots = [[globalThis, 'globalThis', 'namespace']];
  for (const name of ['assert', 'buffer', 'crypto', 'events', 'http', 'https', 'os', 'path', 'punycode', 'querystring',
    'stream', 'string_decoder', 'timers', 'url', 'util', 'zlib'])
    roots.push([require(name), name, 'namespace']);
  const errors = await caught();
  // The error itself is the catcher's own; what it inherits, and its class, are everyone's.
  for (const [label, error] of errors)
    roots.push([Object.getPrototypeOf(error), label + '.__proto__', 'prototype'], [error.constructor, label + '.constructor', 'namespace']);
  const seen = new Set([globalThis.global]);
  const open = [];
  const setters = [];
  const stack = roots;
  while (stack.length) {
    const [object, path, role] = stack.pop();
    if ((typeof object !== 'object' && typeof object !== 'function') || object === null) continue;
    if (seen.has(object) && object !== globalThis) continue;
    seen.add(object);
    if (object !== globalThis && !Object.isFrozen(object)) open.push(path);
    const parent = Object.getPrototypeOf(object);
    // A class's parent class is a type, whose statics are reachable; any other parent is a prototype.
    stack.push([parent, path + '.__proto__', typeof parent === 'function' ? 'namespace' : 'prototype']);
    for (const key of Reflect.ownKeys(object)) {
      const d = Reflect.getOwnPropertyDescriptor(object, key);
      const name = path + '.' + String(key);
      if ('value' in d) {
        if (object !== globalThis || typeof d.value !== 'object' || !['global', 'globalThis'].includes(key))
          stack.push([d.value, name, key === 'prototype' ? 'prototype' : 'namespace']);
        continue;
      }
      stack.push([d.get, name + '#get', 'namespace'], [d.set, name + '#set', 'namespace']);
      if (role === 'prototype' || object === globalThis) continue;
      let current;
      try { current = Reflect.get(object, key); } catch { continue; }
      stack.push([current, name, 'namespace']);
      if (d.set) {
        try { d.set.call(object, current); setters.push(name); } catch {}
      }
    }
  }
  return { reached: seen.size, open, setters, caught: errors.map(([label]) => label) };
};`;

/** The errors CAUGHT must catch on every Node svc runs on. */
const CAUGHT_LABELS = [
  'Buffer.alloc',
  'util.promisify',
  'stream.addAbortSignal',
  'stream.finished',
  'zlib.inflateSync',
  'zlib.inflate',
  'crypto.createHash',
  'crypto.createPrivateKey',
  'crypto.subtle',
  'events.emit',
  'events.once',
  'url',
  'string_decoder',
  'assert',
  'atob',
  'AbortSignal.abort',
  'AggregateError',
];

describe('one tenant, one process', () => {
  const rt = sharedRuntime();

  it('serves many reactors of a tenant from one process, each answering', async () => {
    const tenant = freshId('tenant');
    const instances = [];
    for (let i = 0; i < 30; i++)
      instances.push(
        await loadFor(rt(), tenant, `let calls = 0; module.exports = async () => ({ i: ${i}, calls: ++calls });`),
      );
    for (const [i, instance] of instances.entries()) expect(await answer(invoke(instance))).toEqual({ i, calls: 1 });
    // Module state is each version's own: a second call of one counts its own calls only.
    expect(await answer(invoke(instances[7]!))).toEqual({ i: 7, calls: 2 });
    expect(instances.every((instance) => instance.processCount === 1)).toBe(true);
  });

  it('hardens the whole graph user code reaches, leaving only the settings docs/sandbox.md names', async () => {
    const instance = await loadFor(rt(), freshId('tenant'), WALK);
    const { open, setters, reached, caught } = (await answer(invoke(instance, {}, { timeoutMs: 20_000 }))) as {
      open: string[];
      setters: string[];
      reached: number;
      caught: string[];
    };
    expect(reached).toBeGreaterThan(1000);
    // Errors of Node's own classes (extending the realm's first Error), of C++ (OpenSSL), DOMExceptions
    // and the language's AggregateError were all caught and walked from.
    expect(caught).toEqual(expect.arrayContaining(CAUGHT_LABELS));
    // What static getters answer fresh per read (promisify's custom functions) is the reader's own;
    // EventEmitter.prototype keeps a writable primitive (kCapture) its instances shadow; the
    // compartments' shared Error answers a fresh prepareStackTrace per read (the realm's first Error,
    // which V8 reads, is frozen with its own: first-error.test.ts); `performance` and `process` are the version's own.
    const expected = (path: string) =>
      /Symbol\(nodejs\.util\.promisify\.custom\)$/.test(path) ||
      /\.prepareStackTrace$/.test(path) ||
      path.startsWith('globalThis.performance') ||
      path.startsWith('globalThis.process');
    const eventEmitterPrototype = open.filter((path) => /__proto__\.__proto__\.__proto__$/.test(path));
    expect(open.filter((path) => !expected(path) && !eventEmitterPrototype.includes(path))).toEqual([]);
    expect(eventEmitterPrototype.length).toBeLessThanOrEqual(1);
    expect(setters.map((path) => path.slice(path.lastIndexOf('.') + 1)).sort((a, b) => a.localeCompare(b))).toEqual([
      'captureRejections',
      'defaultMaxListeners',
      'prepareStackTrace',
      'stackTraceLimit',
    ]);
  });

  it("refuses Node's switches of process-wide state, and keeps another owner's view as it was", async () => {
    const tenant = freshId('tenant');
    const meddler = await loadFor(
      rt(),
      tenant,
      `module.exports = async () => {
        const refused = [];
        const attempt = (name, fn) => { try { fn(); } catch (error) { refused.push(name + ': ' + error.constructor.name); } };
        attempt('inspect.defaultOptions', () => { require('util').inspect.defaultOptions = { depth: 0 }; });
        attempt('defaultOptions.depth', () => { require('util').inspect.defaultOptions.depth = 0; });
        attempt('setDefaultHighWaterMark', () => require('stream').setDefaultHighWaterMark(false, 1));
        attempt('setMaxListeners', () => Object.getPrototypeOf(require('stream')).setMaxListeners(1));
        attempt('INSPECT_MAX_BYTES', () => { require('buffer').INSPECT_MAX_BYTES = 1; });
        attempt('EventEmitterAsyncResource', () => Object.getPrototypeOf(require('stream')).EventEmitterAsyncResource);
        attempt('Intl', () => { Intl.DateTimeFormat.prototype.format = () => 'forged'; });
        attempt('globalAgent', () => { require('https').globalAgent.options.forged = true; });
        attempt('performance.mark', () => performance.mark('x'));
        globalThis.shared = 'mine';
        return refused;
      };`,
    );
    const refused = (await answer(invoke(meddler))) as string[];
    expect(refused).toEqual([
      'inspect.defaultOptions: TypeError',
      'defaultOptions.depth: TypeError',
      'setDefaultHighWaterMark: TypeError',
      'setMaxListeners: TypeError',
      'INSPECT_MAX_BYTES: TypeError',
      'EventEmitterAsyncResource: TypeError',
      'Intl: TypeError',
      'globalAgent: TypeError',
      'performance.mark: TypeError',
    ]);
    const other = await loadFor(
      rt(),
      tenant,
      `module.exports = async () => ({
        shared: typeof shared,
        depth: require('util').inspect.defaultOptions.depth,
        date: new Intl.DateTimeFormat('en', { timeZone: 'UTC' }).format(new Date(0)),
        agent: Object.keys(require('https').globalAgent.options),
      });`,
    );
    expect(await answer(invoke(other))).toEqual({ shared: 'undefined', depth: 2, date: '1/1/1970', agent: [] });
    expect(meddler.processCount).toBe(1);
  });

  it("freezes the prototypes of what calls make at run time: an owner's iterators and web streams cannot be spied on", async () => {
    const tenant = freshId('tenant');
    const thief = await loadFor(
      rt(),
      tenant,
      `const stolen = [];
      module.exports = async (req) => {
        if (req.args.report) return stolen;
        const stream = require('stream');
        const patched = [];
        const spy = (proto, name, label) => {
          if (!proto) return;
          const original = proto[name];
          try {
            Object.defineProperty(proto, name, { configurable: true, value(...args) {
              const result = original.apply(this, args);
              Promise.resolve(result).then((r) => stolen.push(label + ':' + JSON.stringify(r && r.value !== undefined ? r.value : args[0])), () => {});
              return result;
            } });
            patched.push(label);
          } catch {}
        };
        const asyncIterator = new stream.PassThrough()[Symbol.asyncIterator]();
        spy(Object.getPrototypeOf(asyncIterator), 'next', 'readable');
        spy(Object.getPrototypeOf(Object.getPrototypeOf(asyncIterator)), 'next', 'readable-base');
        spy(Object.getPrototypeOf(new URLSearchParams('a=1').entries()), 'next', 'params');
        const { writable, readable } = stream.Duplex.toWeb(new stream.PassThrough());
        spy(Object.getPrototypeOf(writable), 'getWriter', 'writer');
        spy(Object.getPrototypeOf(writable.getWriter()), 'write', 'write');
        spy(Object.getPrototypeOf(readable.getReader()), 'read', 'read');
        let controller;
        new readable.constructor({ start: (c) => (controller = c) });
        spy(Object.getPrototypeOf(controller), 'enqueue', 'enqueue');
        return patched;
      };`,
    );
    const victim = await loadFor(
      rt(),
      tenant,
      `module.exports = async (req) => {
        const stream = require('stream');
        const seen = [];
        for await (const chunk of stream.Readable.from([req.args.secret])) seen.push(chunk);
        for (const [key, value] of new URLSearchParams('card=' + req.args.secret)) seen.push(key + value);
        const { writable, readable } = stream.Duplex.toWeb(new stream.PassThrough());
        const writer = writable.getWriter();
        await writer.write(Buffer.from(req.args.secret));
        const web = new readable.constructor({ start: (c) => { c.enqueue(req.args.secret); c.close(); } });
        const reader = web.getReader();
        seen.push((await reader.read()).value);
        return seen.length;
      };`,
    );
    expect(await answer(invoke(thief, { args: {} }))).toEqual([]);
    expect(await answer(invoke(victim, { args: { secret: '4111111111111111' } }))).toBe(3);
    expect(await answer(invoke(thief, { args: { report: true } }))).toEqual([]);
  });

  it("freezes the class of every Node error code, and a byte stream's BYOB request: no owner forges another's", async () => {
    const tenant = freshId('tenant');
    const forger = await loadFor(
      rt(),
      tenant,
      `module.exports = async () => {
        const stream = require('stream');
        const tried = [];
        try { await stream.promises.finished(new stream.PassThrough().destroy()); } catch (error) {
          try { Object.getPrototypeOf(error).then = function (resolve) { resolve('forged'); }; tried.push('then'); } catch {}
        }
        let request;
        const { readable } = stream.Duplex.toWeb(new stream.PassThrough());
        await new readable.constructor({ type: 'bytes', pull(c) { request = c.byobRequest; c.byobRequest.respond(1); } })
          .getReader({ mode: 'byob' }).read(new Uint8Array(1));
        try { Object.getPrototypeOf(request).respond = function () { return 'spied'; }; tried.push('respond'); } catch {}
        return tried;
      };`,
    );
    const victim = await loadFor(
      rt(),
      tenant,
      `module.exports = async () => {
        const stream = require('stream');
        const s = new stream.PassThrough();
        s.destroy();
        const outcome = await new Promise((resolve) => stream.finished(s, (error) => resolve(error)));
        return outcome && outcome.code;
      };`,
    );
    expect(await answer(invoke(forger))).toEqual([]);
    expect(await answer(invoke(victim))).toBe('ERR_STREAM_PREMATURE_CLOSE');
  });

  it('lets no work belong to nobody: what ending a call sets off is refused, even after its code is deleted', async () => {
    const { port, ca, requests } = await countingTlsServer();
    const instance = await loadFor(
      rt(),
      freshId('tenant'),
      `const https = require('https');
      module.exports = async (req) => {
        const options = { hostname: '127.0.0.1', port: ${port}, path: '/first', ca: req.configuration.ca };
        const r = https.request(options);
        r.on('error', () => {
          try { setInterval(() => { try { https.request({ ...options, path: '/orphan' }).on('error', () => {}).end(); } catch {} }, 20); } catch {}
        });
        r.end();
        return 'returned';
      };`,
    );
    expect(await answer(invoke(instance, { configuration: { ca } }))).toBe('returned');
    await rt().unload(instance.id, 'reactor orphan');
    await sleep(300);
    expect(requests.filter((path) => path === '/orphan')).toEqual([]);
  });

  it("replaces a process whose code pinned a setting every emitter inherits, before another owner's next call", async () => {
    const tenant = freshId('tenant');
    const pinner = await loadFor(
      rt(),
      tenant,
      `module.exports = async () => {
        const EE = Object.getPrototypeOf(require('stream').Stream);
        const kCapture = Object.getOwnPropertySymbols(EE.prototype).find((s) => String(s).includes('kCapture'));
        try { Object.defineProperty(EE.prototype, kCapture, { writable: false }); return 'pinned'; } catch { return 'refused'; }
      };`,
    );
    const emitter = await loadFor(
      rt(),
      tenant,
      `module.exports = async () => { const s = new (require('stream').PassThrough)(); s.end('x'); let out = ''; for await (const c of s) out += c; return out; };`,
    );
    expect(await answer(invoke(emitter))).toBe('x');
    const before = rt().pids;
    await answer(invoke(pinner));
    // Its next call finds the process replaced (or the pin refused): emitters work.
    expect(await answer(invoke(emitter))).toBe('x');
    expect(await answer(invoke(emitter))).toBe('x');
    expect(rt().pids.some((pid) => before.includes(pid))).toBe(true);
  });

  it('keeps no async-context store on promises or timers for user code to read or forge', async () => {
    const instance = await loadFor(
      rt(),
      freshId('tenant'),
      `// Node's own async ids are numbers; a store would be an object.
       const stores = (resource) =>
         Object.getOwnPropertySymbols(resource).filter((symbol) => typeof resource[symbol] === 'object').length;
       const topLevel = stores(Promise.resolve());
       module.exports = async () => {
         const timer = setTimeout(() => {}, 1);
         clearTimeout(timer);
         return { topLevel, promise: stores(Promise.resolve()), timer: stores(timer) };
       };`,
    );
    expect(await answer(invoke(instance))).toEqual({ topLevel: 0, promise: 0, timer: 0 });
  });
});

describe('a call owns the work it starts', () => {
  const rt = sharedRuntime();

  it("cannot clear another call's timers by number, nor count them", async () => {
    const tenant = freshId('tenant');
    const sleeper = await loadFor(
      rt(),
      tenant,
      `module.exports = async (req) => {
        const first = setTimeout(() => {}, 1); clearTimeout(first);
        await new Promise((resolve) => setTimeout(resolve, req.args.ms));
        return { first: +first };
      };`,
    );
    const clearer = await loadFor(
      rt(),
      tenant,
      `module.exports = async () => {
        for (let id = 0; id < 500; id++) { clearTimeout(id); clearInterval(id); clearImmediate(id); }
        const mine = setTimeout(() => {}, 1); clearTimeout(mine);
        return { mine: +mine };
      };`,
    );
    const sleeping = invoke(sleeper, { args: { ms: 300 } }, { timeoutMs: 20_000 });
    await sleep(50);
    for (let round = 0; round < 3; round++) expect(await answer(invoke(clearer))).toEqual({ mine: 1 });
    // The sleeper's timer survived, and its ids are its own count.
    expect(await answer(sleeping)).toEqual({ first: 1 });
  });

  it('ends its outbound requests when it returns, and makes none after', async () => {
    const { port, ca, requests } = await countingTlsServer();
    const instance = await loadFor(
      rt(),
      freshId('tenant'),
      `const https = require('https');
       let release;
       let refused;
       module.exports = async (req) => {
         const options = { hostname: '127.0.0.1', port: ${port}, path: '/', ca: req.configuration.ca };
         if (req.args.wait) {
           return await new Promise((resolve, reject) => {
             https.get(options, (res) => { let body = ''; res.on('data', (c) => (body += c)); res.on('end', () => resolve(body)); }).on('error', reject);
           });
         }
         if (req.args.release) {
           release();
           await new Promise((resolve) => setTimeout(resolve, 10));
           return refused;
         }
         // Work left for after the call: a continuation of this call's, run once the next call releases it.
         const gate = new Promise((resolve) => (release = resolve));
         (async () => {
           await gate;
           try { https.get({ ...options, path: '/after' }); } catch (error) { refused = error.message; }
         })();
         for (let i = 0; i < 50; i++) https.get({ ...options, path: '/left/' + i }).on('error', () => {});
         return 'sent';
       };`,
    );
    // No connection is open yet: every request of the call waits for its TLS handshake when it returns.
    expect(await answer(invoke(instance, { args: {}, configuration: { ca } }))).toBe('sent');
    expect(await answer(invoke(instance, { args: { release: true }, configuration: { ca } }))).toBe(
      'The call that would make this request has returned: outbound requests belong to their call.',
    );
    // A control request, made and awaited after: once it is in, any left-behind one would be too.
    expect(await answer(invoke(instance, { args: { wait: true }, configuration: { ca } }))).toBe('answered /');
    await sleep(200);
    expect(requests).toEqual(['/']);
  });

  it('ends its calls in flight when its code is deleted, at once, saying so', async () => {
    const instance = await loadFor(
      rt(),
      freshId('tenant'),
      `module.exports = async () => { await new Promise((resolve) => setTimeout(resolve, 60_000)); return 'late'; };`,
    );
    const calls = [invoke(instance, {}, { timeoutMs: 60_000 }), invoke(instance, {}, { timeoutMs: 60_000 })];
    await sleep(50);
    await rt().unload(instance.id, 'reactor slow');
    for (const call of calls) {
      const error = await rejection(call);
      expect(error.status).toBe(409);
      expect(error.detail).toBe('Reactor slow was deleted while this call ran; the call was stopped.');
    }
    const after = await rejection(invoke(instance));
    expect(after.status).toBe(409);
  });
});

describe('what crosses to a sandbox', () => {
  const rt = sharedRuntime();

  it('fits any 5 MB input, whatever its bytes; one over fails alone, before it is sent', async () => {
    const tenant = freshId('tenant');
    const echo = await loadFor(rt(), tenant, `module.exports = async (req) => req.args.text.length;`);
    const sleeper = await loadFor(
      rt(),
      tenant,
      `module.exports = async () => { await new Promise((resolve) => setTimeout(resolve, 300)); return 'slept'; };`,
    );
    // 4.9 MB of control bytes: about 29 MB as a JSON string.
    const controls = '\u0001'.repeat(4.9 * 1024 * 1024);
    expect(await answer(invoke(echo, { args: { text: controls } }, { timeoutMs: 20_000 }))).toBe(controls.length);
    const sleeping = invoke(sleeper, {}, { timeoutMs: 20_000 });
    const tooBig = await rejection(invoke(echo, { args: { text: controls.repeat(2) } }, { timeoutMs: 20_000 }));
    expect(tooBig.status).toBe(413);
    expect(tooBig.detail).toMatch(/once encoded for the sandbox, over its limit of 48 MB/);
    expect(await answer(sleeping)).toBe('slept');
  });
});

describe('the budget, shared fairly', () => {
  it('serves a tenant at once while another holds every process it may have', async () => {
    const rt = runtime({ maxProcesses: 1, maxProcessesPerGroup: 2 });
    const spinner = await loadFor(rt, 'busy', `module.exports = async () => { for (;;) {} };`);
    const held = [invoke(spinner, {}, { timeoutMs: 8000 })];
    await sleep(400);
    // Held: a second call of the tenant finds no process that answers, and no room for another.
    held.push(invoke(spinner, {}, { timeoutMs: 8000 }));
    for (const call of held) call.catch(() => {});
    // Another tenant loads and is answered while the first is held (its own process, over the cap).
    const other = await loadFor(rt, 'calm', `module.exports = async (req) => req.args;`);
    expect(await answer(invoke(other, { args: { ok: true } }))).toEqual({ ok: true });
    // The first is stopped at its timeout; the second, queued behind it, never got to run.
    const statuses = [];
    for (const call of held) statuses.push((await rejection(call)).status);
    expect(statuses.sort()).toEqual([408, 503]);
  });

  it("with a process per owner, holds one tenant to the budget, and never another tenant's first process", async () => {
    const rt = runtime({ maxProcesses: 2, isolation: 'owner' });
    const waiter = `module.exports = async (req) => { await new Promise((resolve) => setTimeout(resolve, req.args.ms)); return 'done'; };`;
    const owners = [];
    for (let i = 0; i < 4; i++) owners.push(await loadFor(rt, 'crowded', waiter));
    const calls = owners.map((owner) => invoke(owner, { args: { ms: 400 } }, { timeoutMs: 20_000 }));
    await sleep(100);
    expect(rt.processCount).toBeLessThanOrEqual(2);
    // Another tenant's first process is its due, over the cap.
    const other = await loadFor(rt, 'elsewhere', `module.exports = async () => 'served';`);
    expect(await answer(invoke(other))).toBe('served');
    for (const call of calls) expect(await answer(call)).toBe('done');
  });

  it('answers 503 with Retry-After a call that never got to run within its timeout', async () => {
    const rt = runtime({ maxProcesses: 1, maxProcessesPerGroup: 1 });
    const tenant = freshId('tenant');
    const spinner = await loadFor(rt, tenant, `module.exports = async () => { for (;;) {} };`);
    const quick = await loadFor(rt, tenant, `module.exports = async () => 'ran';`);
    const spinning = invoke(spinner, {}, { timeoutMs: 10_000 });
    spinning.catch(() => {});
    // Queued once the process is seen held (a probe unanswered).
    await eventually(() => expect(spinner.processCount).toBe(1));
    await sleep(400);
    const error = await rejection(invoke(quick, {}, { timeoutMs: 1000 }));
    expect(error.status).toBe(503);
    expect(error.retryAfter).toBe(1);
    expect(error.detail).toMatch(
      /did not get to run: its timeout of 1000 ms passed while the sandbox process was held by a call of/,
    );
  });
});

/** A real HTTPS server on 127.0.0.1 that records the path of every request it gets. */
async function countingTlsServer(): Promise<{ port: number; ca: string; requests: string[] }> {
  const requests: string[] = [];
  const { port, ca } = await tlsServer((path) => requests.push(path));
  return { port, ca, requests };
}
