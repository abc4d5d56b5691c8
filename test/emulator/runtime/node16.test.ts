/**
 * Node 16 as the platform's runtime has it: the tamed `process`, the built-in modules the platform's
 * packages need, the language without what later Nodes added (a use of it fails naming the
 * platform's Node), and prototypes libraries assign `constructor` or `toString` on. Needs the build.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BUILTIN_ALLOWLIST } from '../../../src/emulator/runtime/index.js';
import { NODE16_ABSENT } from '../../../src/emulator/runtime/node16.js';
import { load, invoke, rejection, run, sharedRuntime, value } from './helpers.js';

const rt = sharedRuntime();

describe('process is Node 16’s, with nothing of the host', () => {
  it('answers what libraries read of it', async () => {
    expect(
      await value(
        rt(),
        `module.exports = async () => ({
          tag: Object.prototype.toString.call(process),
          version: process.version, node: process.versions.node, v8: process.versions.v8,
          release: process.release.name, platform: process.platform, arch: process.arch,
          argv: Array.isArray(process.argv), cwd: process.cwd(), env: { ...process.env },
          hrtime: process.hrtime().length, elapsed: process.hrtime(process.hrtime())[0] >= 0,
          bigint: typeof process.hrtime.bigint(), same: require('process') === process && require('node:process') === process,
          global: globalThis.process === process,
        });`,
      ),
    ).toEqual({
      tag: '[object process]',
      version: 'v16.20.2',
      node: '16.20.2',
      v8: expect.stringMatching(/^9\.4\./),
      release: 'node',
      platform: 'linux',
      arch: 'x64',
      argv: true,
      cwd: '/var/task',
      env: {},
      hrtime: 2,
      elapsed: true,
      bigint: 'bigint',
      same: true,
      global: true,
    });
  });

  it('has no member that reaches the host', async () => {
    const denied = [
      'exit',
      'kill',
      'abort',
      'binding',
      '_linkedBinding',
      'dlopen',
      'chdir',
      'umask',
      'memoryUsage',
      'resourceUsage',
      'cpuUsage',
      'setuid',
      'reallyExit',
      'mainModule',
      'stdout',
      'stderr',
      'stdin',
      'report',
      'permission',
      'getBuiltinModule',
      'channel',
      'send',
      'disconnect',
      'config',
      'features',
      'moduleLoadList',
    ];
    expect(
      await value(
        rt(),
        `module.exports = async (req) => ({
          present: req.args.filter((name) => process[name] !== undefined),
          // Its class is the events module's, frozen; nothing of it leads to Node's process object.
          viaEmit: (() => { let got; process.on('x', (v) => (got = v)); process.emit('x', 1); return got; })(),
        });`,
        { args: denied },
      ),
    ).toEqual({ present: [], viaEmit: 1 });
  });

  it('each version has its own: an env one sets is not another’s', async () => {
    const writer = await load(rt(), `process.env.SECRET = 'mine'; module.exports = async () => process.env.SECRET;`);
    const reader = await load(rt(), `module.exports = async () => process.env.SECRET ?? null;`);
    onTestFinished(async () => {
      await rt().unload(writer.id);
      await rt().unload(reader.id);
    });
    expect((await invoke(writer)).value).toBe('mine');
    expect((await invoke(reader)).value).toBe(null);
  });

  it('nextTick runs before promise callbacks, and emitWarning writes to the call’s console', async () => {
    const result = await run(
      rt(),
      `module.exports = async () => {
         const order = [];
         await new Promise((resolve) => { Promise.resolve().then(() => order.push('promise')); process.nextTick((a) => order.push(a), 'tick'); setTimeout(resolve, 5); });
         process.emitWarning('careful', 'DeprecationWarning');
         return order;
       };`,
    );
    expect(result.value).toEqual(['tick', 'promise']);
    expect(result.logs.map((entry) => `${entry.level} ${entry.text}`)).toEqual([
      'warn (node) DeprecationWarning: careful',
    ]);
  });
});

describe('the built-in modules', () => {
  it('every one on the list loads; fs is refused to user code', async () => {
    expect(
      await value(
        rt(),
        `module.exports = async (req) => ({
          loaded: req.args.filter((name) => { const m = require(name); return (typeof m === 'object' || typeof m === 'function') && m === require('node:' + name); }),
          fs: (() => { try { require('fs'); return 'loaded'; } catch (e) { return e.message.slice(0, 23); } })(),
          tty: (() => { try { require('tty'); return 'loaded'; } catch (e) { return e.message.slice(0, 24); } })(),
          os: [require('os').cpus().length, require('os').hostname(), require('os').homedir(), require('os').EOL],
        });`,
        { args: [...BUILTIN_ALLOWLIST] },
      ),
    ).toEqual({
      loaded: [...BUILTIN_ALLOWLIST],
      fs: 'Cannot require "fs": on',
      tty: 'Cannot require "tty": on',
      os: [1, 'localhost', '/var/task', '\n'],
    });
  });

  it('path, url and assert answer with nothing of the host’s folders or files', async () => {
    expect(
      await value(
        rt(),
        `const path = require('path'); const url = require('url'); const assert = require('assert');
         module.exports = async () => ({
           // (Node's AssertionError extends the realm's first Error, which is never handed out: user code gets its own.)
           resolved: path.resolve('keys', '../a.pem'), relative: path.relative('x', '/var/task/y'), joined: path.join('/a', 'b'),
           fileUrl: url.pathToFileURL('data.json').href,
           failed: (() => { try { assert(false); } catch (e) { return [e.code, e.message, e instanceof assert.AssertionError, e instanceof Error]; } })(),
           strict: (() => { try { assert.strict.equal(1, 2); } catch (e) { return [e.code, e.actual, e.expected, e.operator]; } })(),
           rejects: await assert.rejects(Promise.resolve(1)).catch((e) => e.constructor === assert.AssertionError),
         });`,
      ),
    ).toEqual({
      resolved: '/var/task/a.pem',
      relative: '../y',
      joined: '/a/b',
      fileUrl: 'file:///var/task/data.json',
      failed: ['ERR_ASSERTION', 'The expression evaluated to a falsy value', true, true],
      strict: ['ERR_ASSERTION', 1, 2, 'strictEqual'],
      rejects: true,
    });
  });

  it('http requests a plain-http destination through the gateway; zlib and events work', async () => {
    const server = http.createServer((request, response) => response.end(`${request.method} ${request.url}`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    expect(
      await value(
        rt(),
        `const http = require('http'); const zlib = require('zlib'); const { EventEmitter, once } = require('events');
         const { promisify } = require('util');
         module.exports = async (req) => {
           const body = await new Promise((resolve, reject) => {
             http.get({ host: '127.0.0.1', port: req.args.port, path: '/hello?x=1' }, (res) => {
               let text = ''; res.setEncoding('utf8'); res.on('data', (c) => (text += c)); res.on('end', () => resolve(res.statusCode + ' ' + text));
             }).on('error', reject);
           });
           const gz = await promisify(zlib.gzip)('zipped');
           const emitter = new EventEmitter(); setTimeout(() => emitter.emit('done', 42), 1);
           const [got] = await once(emitter, 'done');
           return { body, unzipped: zlib.gunzipSync(gz).toString(), got, codes: http.STATUS_CODES[404] };
         };`,
        { args: { port } },
        { timeoutMs: 10_000 },
      ),
    ).toEqual({ body: '200 GET /hello?x=1', unzipped: 'zipped', got: 42, codes: 'Not Found' });
  });
});

describe('the language is Node 16’s', () => {
  it('what later Nodes added is absent, and a use of it says so', async () => {
    const present = (await value(
      rt(),
      `module.exports = async (req) => req.args.filter((path) => {
         const parts = path.split('.');
         let at = parts[0] === 'TypedArray' ? Object.getPrototypeOf(Uint8Array) : globalThis[parts[0]];
         for (const part of parts.slice(1)) at = at?.[part];
         return at !== undefined;
       });`,
      { args: NODE16_ABSENT.map(([path]) => path) },
    )) as string[];
    expect(present).toEqual([]);
    const error = await rejection(run(rt(), `module.exports = async () => [3, 1, 2].toSorted();`));
    expect(error.message).toContain(
      '[3,1,2].toSorted is not a function (the platform runs Node 16: Array.prototype.toSorted arrived in Node 20)',
    );
    const clone = await rejection(run(rt(), `module.exports = async () => structuredClone({ a: 1 });`));
    expect(clone.message).toContain(
      'structuredClone is not a function (the platform runs Node 16: structuredClone arrived in Node 17)',
    );
  });

  it('what Node 16 has stays: at, Object.hasOwn, Error cause, AbortSignal.timeout', async () => {
    expect(
      await value(
        rt(),
        `module.exports = async () => ({ at: [1, 2, 3].at(-1), own: Object.hasOwn({ a: 1 }, 'a'),
           cause: new Error('x', { cause: 'y' }).cause, timeout: typeof AbortSignal.timeout, fetch: typeof fetch, iterator: typeof Iterator });`,
      ),
    ).toEqual({ at: 3, own: true, cause: 'y', timeout: 'function', fetch: 'undefined', iterator: 'undefined' });
  });
});

describe('libraries assign constructor, toString and name on their own objects', () => {
  it('as TypeScript’s __extends and hand-made classes do, while the shared prototypes stay frozen', async () => {
    const result = await run(
      rt(),
      `function MyList() {}
         function __() { this.constructor = MyList; }
         __.prototype = Array.prototype;
         MyList.prototype = new __();
         class Failure extends Error {}
         Failure.prototype.name = 'Failure';
         const e = Object.create(TypeError.prototype); e.message = 'own'; e.toString = () => 'mine';
         const m = new Map(); m.toString = () => 'a map';
         module.exports = async () => (console.log([1, 2], { a: [3] }), {
           ctor: MyList.prototype.constructor === MyList, arrayCtor: [].constructor === Array,
           name: new Failure('x').name, errorName: new Error('y').name, e: String(e), map: String(m),
           shared: (() => { try { Array.prototype.constructor = Object; return 'changed'; } catch (err) { return err.constructor.name; } })(),
           frozen: Object.isFrozen(Array.prototype) && Object.isFrozen(Error.prototype) && Object.isFrozen(Map.prototype),
         });`,
    );
    // The console still names an array as Node does (its prototype's `constructor` stays a data property).
    expect(result.logs.map((entry) => entry.text)).toEqual(['[ 1, 2 ] { a: [ 3 ] }']);
    expect(result.value).toEqual({
      ctor: true,
      arrayCtor: true,
      name: 'Failure',
      errorName: 'Error',
      e: 'mine',
      map: 'a map',
      shared: 'TypeError',
      frozen: true,
    });
  });
});
