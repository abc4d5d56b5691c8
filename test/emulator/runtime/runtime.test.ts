/**
 * The sandbox runtime: loading, globals, the allowlists, results and errors, limits, hot
 * concurrency, hot swap and req.svc. Needs the build (`npm run build`): the sandbox process runs from dist/.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BUILTIN_ALLOWLIST,
  DEFAULT_NPM_ALLOWLIST,
  type Runtime,
  type LogEntry,
  type SvcHandler,
  type SvcMethod,
} from '../../../src/emulator/runtime/index.js';
import { Cipher } from '../../../src/emulator/crypto/cipher.js';
import { createServices } from '../../../src/emulator/services/index.js';
import { svcHandler } from '../../../src/emulator/services/req-svc.js';
import { Store } from '../../../src/emulator/store/store.js';
import { tempDir } from '../../helpers/temp.js';
import {
  FILENAME,
  attempt,
  freshId,
  invoke,
  load,
  rejection,
  run,
  runtime,
  sharedRuntime,
  sleep,
  value,
} from './helpers.js';

describe('loading', () => {
  const rt = sharedRuntime({ loadTimeoutMs: 500 });

  it('refuses a module that does not export a function (422)', async () => {
    const error = await rejection(load(rt(), `exports.handler = async () => 1;`, 'reactors/charge.js'));
    expect(error.status).toBe(422);
    expect(error.title).toBe('Code does not load');
    expect(error.detail).toBe(
      'reactors/charge.js must export a function: module.exports = async function (req) { ... } (it exports an object with handler)',
    );
    const nothing = await rejection(load(rt(), `// nothing`));
    expect(nothing.detail).toMatch(/must export a function: .* \(it exports an empty object\)$/);
    const number = await rejection(load(rt(), `module.exports = 42;`));
    expect(number.detail).toMatch(/\(it exports a number\)$/);
  });

  it('refuses a syntax error with file:line:column, the line and a caret (422)', async () => {
    const error = await rejection(
      load(rt(), `// one\nconst ok = 1;\nconst x = ;\nmodule.exports = async () => x;`, 'reactors/charge.js'),
    );
    expect(error.status).toBe(422);
    expect(error.detail).toBe(`reactors/charge.js:3:11: SyntaxError: Unexpected token ';'\nconst x = ;\n          ^`);
  });

  it('gives the user’s column for a syntax error on line 1 (the wrapper is not counted)', async () => {
    const error = await rejection(load(rt(), `const x = ;`));
    expect(error.detail).toBe(`${FILENAME}:1:11: SyntaxError: Unexpected token ';'\nconst x = ;\n          ^`);
  });

  it('gives file:line:column of a strict-mode syntax error (the compartment runs code strict), the columns of line 1 the user’s', async () => {
    const octal = await rejection(load(rt(), `module.exports = async () => { return 010; };`, 'reactors/charge.js'));
    expect(octal.status).toBe(422);
    expect(octal.detail).toBe(
      'reactors/charge.js:1:39: SyntaxError: Octal literals are not allowed in strict mode.\nmodule.exports = async () => { return 010; };\n                                      ^^^',
    );
    const withStatement = await rejection(
      load(rt(), `// one\nmodule.exports = async (o) => { with (o) { return 1; } };`, 'reactors/charge.js'),
    );
    expect(withStatement.detail.split('\n')[0]).toBe(
      'reactors/charge.js:2:33: SyntaxError: Strict mode code may not include a with statement',
    );
  });

  it('gives the user’s column for code that throws on line 1 as it loads, and as it runs', async () => {
    const loading = await rejection(
      load(rt(), `const x = 1; null.boom; module.exports = async () => x;`, 'reactors/charge.js'),
    );
    expect(loading.detail).toBe("reactors/charge.js:1:19: TypeError: Cannot read properties of null (reading 'boom')");
    const running = await rejection(
      run(rt(), `module.exports = async () => { throw new Error('one'); };`, {}, { filename: 'reactors/charge.js' }),
    );
    expect(running.detail).toBe('reactors/charge.js:1:38: Error: one');
    expect(running.userStack).toContain('(reactors/charge.js:1:38)');
  });

  it('refuses code that throws at the top level, with the location (422)', async () => {
    const error = await rejection(
      load(rt(), `// one\n\nthrow new RangeError('boom');\nmodule.exports = async () => 1;`, 'reactors/charge.js'),
    );
    expect(error.status).toBe(422);
    expect(error.detail).toBe('reactors/charge.js:3:7: RangeError: boom');
    expect(error.userStack).toContain('reactors/charge.js:3:7');
  });

  it('stops a top-level infinite loop at loadTimeoutMs (422) and keeps working', async () => {
    const started = performance.now();
    const error = await rejection(load(rt(), `for (;;) {}\nmodule.exports = async () => 1;`));
    const elapsed = performance.now() - started;
    expect(error.status).toBe(422);
    expect(error.detail).toBe(`${FILENAME} did not finish loading within 500 ms (a loop at the top level?).`);
    // Not before the load's timeout (no upper bound: a loaded machine boots a process slowly).
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(await value(rt(), `module.exports = async () => 'still working';`)).toBe('still working');
  });
});

describe('globals and built-ins', () => {
  const rt = sharedRuntime();

  it('offers Node 16’s safe globals, working', async () => {
    const before = Date.now();
    const outcome = await value(
      rt(),
      `module.exports = async () => {
  const out = {};
  out.console = ['log', 'info', 'warn', 'error', 'debug'].map((m) => typeof console[m]);
  out.setTimeout = await new Promise((resolve) => setTimeout(resolve, 5, 'fired'));
  let cleared = 'not fired';
  clearTimeout(setTimeout(() => { cleared = 'fired'; }, 1));
  await new Promise((resolve) => setTimeout(resolve, 20));
  out.clearTimeout = cleared;
  out.setInterval = await new Promise((resolve) => { let n = 0; const t = setInterval(() => { if (++n === 3) { clearInterval(t); resolve(n); } }, 1); });
  out.setImmediate = await new Promise((resolve) => setImmediate(resolve, 'immediate'));
  out.queueMicrotask = await new Promise((resolve) => queueMicrotask(() => resolve('microtask')));
  out.Buffer = Buffer.from('hi').toString('base64') + ' ' + Buffer.from('aGk=', 'base64').toString();
  const url = new URL('https://example.com/a/b?x=1&y=2#h');
  out.URL = [url.hostname, url.pathname, url.searchParams.get('y')];
  out.URLSearchParams = new URLSearchParams({ a: '1', b: 'two words' }).toString();
  out.TextEncoder = Array.from(new TextEncoder().encode('é'));
  out.TextDecoder = new TextDecoder().decode(new Uint8Array([0xc3, 0xa9]));
  const controller = new AbortController();
  controller.abort();
  out.AbortController = [controller.signal.aborted, controller.signal instanceof AbortSignal];
  out.atob = [btoa('hello'), atob('aGVsbG8=')];
  const r1 = Math.random(), r2 = Math.random();
  out.random = [r1 >= 0 && r1 < 1, r1 !== r2];
  out.now = Date.now();
  out.date = new Date(0).toISOString();
  out.floats = [Array.from(new Float32Array([1.5])), Array.from(new Float64Array(new Float32Array([0.5]).buffer.byteLength === 4 ? [2.25] : []))];
  out.timerThis = await new Promise((resolve) => setTimeout(function () { resolve(typeof this.ref + ' ' + typeof this._idleNext + ' ' + typeof this._onTimeout); }, 1));
  return out;
};`,
    );
    expect(outcome).toEqual({
      console: ['function', 'function', 'function', 'function', 'function'],
      setTimeout: 'fired',
      clearTimeout: 'not fired',
      setInterval: 3,
      setImmediate: 'immediate',
      queueMicrotask: 'microtask',
      Buffer: 'aGk= hi',
      URL: ['example.com', '/a/b', '2'],
      URLSearchParams: 'a=1&b=two+words',
      TextEncoder: [0xc3, 0xa9],
      TextDecoder: 'é',
      AbortController: [true, true],
      atob: ['aGVsbG8=', 'hello'],
      random: [true, true],
      now: expect.any(Number),
      date: '1970-01-01T00:00:00.000Z',
      floats: [[1.5], [2.25]],
      // `this` of a timer callback is the sandbox's handle, never Node's Timeout (a link of its timer lists).
      timerThis: 'function undefined undefined',
    });
    const now = (outcome as { now: number }).now;
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });

  it.each(['', 'node:'])('serves every allowlisted built-in, working (prefix %j)', async (prefix) => {
    const outcome = await value(
      rt(),
      `const p = ${JSON.stringify(prefix)};
module.exports = async () => {
  const { Readable } = require(p + 'stream');
  const chunks = [];
  for await (const chunk of Readable.from(['a', 'b'])) chunks.push(chunk);
  return {
    buffer: require(p + 'buffer').Buffer.from('x').length,
    crypto: require(p + 'crypto').createHash('sha256').update('svc').digest('hex'),
    https: typeof require(p + 'https').request,
    querystring: require(p + 'querystring').stringify({ a: 1, b: ['x', 'y'] }),
    stream: chunks.join(''),
    url: require(p + 'url').parse('https://example.com:8443/p?q=1').port,
    util: require(p + 'util').format('%s-%d', 'a', 7),
    same: require(p + 'crypto') === require('crypto'),
  };
};`,
    );
    expect(outcome).toEqual({
      buffer: 1,
      crypto: createHash('sha256').update('svc').digest('hex'),
      https: 'function',
      querystring: 'a=1&b=x&b=y',
      stream: 'ab',
      url: '8443',
      util: 'a-7',
      same: true,
    });
  });
});

describe('npm allowlist', () => {
  async function project(): Promise<string> {
    const dir = await tempDir('svc-runtime-npm-');
    const pkg = async (name: string, files: Record<string, string>) => {
      const folder = path.join(dir, 'node_modules', name);
      await mkdir(folder, { recursive: true });
      await writeFile(path.join(folder, 'package.json'), JSON.stringify({ name, version: '1.0.0', main: 'index.js' }));
      for (const [file, source] of Object.entries(files)) await writeFile(path.join(folder, file), source);
    };
    await pkg('leftpad-x', {
      'index.js': `const crypto = require('crypto');
const { pad } = require('./lib.js');
module.exports = function leftpad(s, n) { return pad(String(s), n); };
module.exports.digest = (s) => crypto.createHash('sha1').update(s).digest('hex');
module.exports.sandboxed = () => [typeof process, typeof require('util').inspect, typeof (function () { return this; })()];`,
      'lib.js': `exports.pad = (s, n) => ' '.repeat(Math.max(0, n - s.length)) + s;`,
    });
    await pkg('uses-fs', {
      'index.js': `const fs = require('fs'); module.exports = () => fs.readFileSync('/etc/hostname');`,
    });
    await pkg('uses-child', { 'index.js': `module.exports = require('child_process');` });
    await pkg('sneaky', { 'index.js': `module.exports = require('../../outside.js');` });
    await pkg('unlisted', { 'index.js': `module.exports = 'unlisted';` });
    await writeFile(path.join(dir, 'outside.js'), `module.exports = 'outside';`);
    return dir;
  }

  const allowlist = ['leftpad-x', 'uses-fs', 'uses-child', 'sneaky', 'not-installed'];
  const names = [...BUILTIN_ALLOWLIST, ...allowlist, '@svc/errors'].join(', ');

  it('serves an allowlisted package (with its own requires) inside the sandbox, and refuses the rest', async () => {
    const projectDir = await project();
    const rt = runtime({ projectDir, npmAllowlist: allowlist });

    expect(
      await value(
        rt,
        `const leftpad = require('leftpad-x');
module.exports = async () => [leftpad('7', 3), leftpad.digest('svc'), leftpad.sandboxed(), require('leftpad-x') === leftpad];`,
      ),
    ).toEqual(['  7', createHash('sha1').update('svc').digest('hex'), ['object', 'function', 'undefined'], true]);

    // Not on the list, though installed.
    expect(await value(rt, attempt(`return require('unlisted');`))).toEqual({
      threw: `Error: Cannot require "unlisted": only these modules are available: ${names}.`,
    });
    // On the list, not installed.
    expect(await value(rt, attempt(`return require('not-installed');`))).toEqual({
      threw: `Error: Cannot find module "not-installed" in your project: install it (npm install not-installed).`,
    });
    // An allowlisted package's own requires obey the built-in allowlist (its `fs` refuses every use) ...
    expect(await value(rt, attempt(`return require('uses-fs')();`))).toEqual({
      threw: `Error: fs.readFileSync is not available: the sandbox has no file system.`,
    });
    expect(await value(rt, attempt(`return require('uses-child');`))).toEqual({
      threw: `Error: Cannot require "child_process": only these modules are available: ${names}.`,
    });
    // ... and cannot leave node_modules.
    expect(await value(rt, attempt(`return require('sneaky');`))).toEqual({
      threw: `Error: Cannot require "../../outside.js": only files of packages in your project's node_modules can be loaded.`,
    });
    // A package of the default allowlist is not allowed when the list is configured without it.
    expect(await value(rt, attempt(`return require('lodash');`))).toEqual({
      threw: `Error: Cannot require "lodash": only these modules are available: ${names}.`,
    });
  });

  it('refuses an allowlisted package that requires child_process at load time with a 422', async () => {
    const projectDir = await project();
    const rt = runtime({ projectDir, npmAllowlist: allowlist });
    const error = await rejection(
      load(rt, `const childViaPackage = require('uses-child');\nmodule.exports = async () => 1;`),
    );
    expect(error.status).toBe(422);
    expect(error.detail).toContain(`Cannot require "child_process": only these modules are available: ${names}.`);
    expect(error.detail).toMatch(new RegExp(`^${FILENAME}:1:\\d+: Error: `));
  });

  it('uses the default platform allowlist when none is configured', async () => {
    const projectDir = await project();
    const rt = runtime({ projectDir });
    expect(await value(rt, attempt(`return require('leftpad-x');`))).toEqual({
      threw: `Error: Cannot require "leftpad-x": only these modules are available: ${[...BUILTIN_ALLOWLIST, ...DEFAULT_NPM_ALLOWLIST, '@svc/errors'].join(', ')}.`,
    });
    expect(await value(rt, attempt(`return require('uuid');`))).toEqual({
      threw: `Error: Cannot find module "uuid" in your project: install it (npm install uuid).`,
    });
  });
});

describe('results and arguments', () => {
  const rt = sharedRuntime();

  it('passes args and configuration in and the result out as JSON', async () => {
    const result = await run(
      rt(),
      `module.exports = async (req) => ({ args: req.args, configuration: req.configuration, keys: Object.keys(req) });`,
      {
        args: { amount: 42, card: { last4: '4242' }, list: [1, 'two', null] },
        configuration: { CURRENCY: 'EUR' },
      },
    );
    expect(result.value).toEqual({
      args: { amount: 42, card: { last4: '4242' }, list: [1, 'two', null] },
      configuration: { CURRENCY: 'EUR' },
      keys: ['args', 'configuration', 'svc'],
    });
    expect(result.ms).toBeGreaterThanOrEqual(0);
  });

  it('defaults args to null and configuration to {}, and answers undefined as null', async () => {
    const instance = await load(
      rt(),
      `module.exports = async (req) => req.args === null ? undefined : [req.args, req.configuration];`,
    );
    try {
      expect(
        (await instance.invoke({ args: undefined, configuration: undefined }, { timeoutMs: 2000 })).value,
      ).toBeNull();
      expect((await instance.invoke({ args: 1, configuration: undefined }, { timeoutMs: 2000 })).value).toEqual([
        1,
        {},
      ]);
    } finally {
      await rt().unload(instance.id);
    }
  });

  it('answers null for a result JSON has no form of (a function, a symbol)', async () => {
    expect(await value(rt(), `module.exports = async () => () => 1;`)).toBeNull();
    expect(await value(rt(), `module.exports = async () => Symbol('s');`)).toBeNull();
  });

  it('answers a plain (non-async) function’s value, and JSON-normalizes it', async () => {
    expect(
      await value(rt(), `module.exports = function () { return { d: new Date(0), u: undefined, n: NaN, f() {} }; };`),
    ).toEqual({
      d: '1970-01-01T00:00:00.000Z',
      n: null,
    });
  });

  it('refuses a result that is not JSON (500, a clear message)', async () => {
    const bigint = await rejection(run(rt(), `module.exports = async () => ({ amount: 10n });`));
    expect(bigint.status).toBe(500);
    expect(bigint.title).toBe('Invalid result');
    expect(bigint.detail).toBe("The function's result is not JSON: Do not know how to serialize a BigInt");

    const cycle = await rejection(
      run(rt(), `module.exports = async () => { const a = { name: 'a' }; a.self = a; return a; };`),
    );
    expect(cycle.status).toBe(500);
    expect(cycle.detail).toMatch(/^The function's result is not JSON: Converting circular structure to JSON/);
  });
});

describe('errors', () => {
  const rt = sharedRuntime();

  const classes = [
    ['AuthenticationError', 401, 'Authentication Failed'],
    ['AuthorizationError', 403, 'Forbidden'],
    ['BadRequestError', 400, 'Bad Request'],
    ['InvalidPaymentMethodError', 402, 'Invalid Payment Method'],
    ['InvalidReactorConfigurationError', 400, 'Invalid Reactor Configuration'],
    ['RateLimitError', 429, 'Rate Limit Exceeded'],
    ['ReactorRuntimeError', 500, 'Reactor Runtime Error'],
    ['ServiceUnavailableError', 503, 'Service Unavailable'],
  ] as const;

  // The vendor's reactor-formulas SDK: the class's fixed text is the detail, the argument the errors.
  it.each(classes)('maps %s to %i, as a global and from @svc/errors', async (name, status, fixed) => {
    const global = await rejection(
      run(rt(), `module.exports = async () => { throw new ${name}('because ${name}'); };`),
    );
    expect(global.status).toBe(status);
    expect(global.detail).toBe(fixed);
    expect(global.errors).toEqual({ error: [`because ${name}`] });
    expect(global.userStack).toMatch(new RegExp(`^${name}: ${fixed}\\n`));

    const required = await rejection(
      run(
        rt(),
        `const errors = require('@svc/errors');\nmodule.exports = async () => { throw new errors.${name}(); };`,
      ),
    );
    expect(required.status).toBe(status);
    expect(required.detail).toBe(fixed);
    expect(required.errors).toEqual({ error: ['Something went wrong. Please try again.'] });
  });

  it('makes the classes work with instanceof, and the global and module ones the same', async () => {
    expect(
      await value(
        rt(),
        `const errors = require('@svc/errors');
module.exports = async () => {
  try { throw new BadRequestError('x'); } catch (e) {
    return [e instanceof BadRequestError, e instanceof errors.BadRequestError, e instanceof Error, e instanceof AuthorizationError,
      e.status, e.name, e.message, errors.BadRequestError === BadRequestError, Object.isFrozen(errors)];
  }
};`,
      ),
    ).toEqual([true, true, true, false, 400, 'BadRequestError', 'Bad Request', true, true]);
  });

  it('lets user classes extend the platform classes', async () => {
    expect(
      await value(
        rt(),
        `class PaymentDeclined extends BadRequestError {}
module.exports = async () => { const e = new PaymentDeclined('declined'); return [e instanceof BadRequestError, e.status, e.name, e.message]; };`,
      ),
    ).toEqual([true, 400, 'PaymentDeclined', 'Bad Request']);
  });

  // By class, not by name: `class PaymentDeclined extends BadRequestError` is a 400 too.
  it('answers a subclass of a platform class with the parent’s status', async () => {
    const error = await rejection(
      run(
        rt(),
        `class PaymentDeclined extends BadRequestError {}\nmodule.exports = async () => { throw new PaymentDeclined('declined'); };`,
      ),
    );
    expect(error.status).toBe(400);
  });

  it('does not take a status from a look-alike error', async () => {
    const error = await rejection(
      run(
        rt(),
        `module.exports = async () => { const e = new Error('x'); e.name = 'BadRequestError'; e.status = 400; throw e; };`,
      ),
    );
    expect(error.status).toBe(500);
    expect(error.detail).toBe(`${FILENAME}:1:42: BadRequestError: x`);
  });

  it('passes a CustomHttpResponseError through in .custom', async () => {
    const error = await rejection(
      run(
        rt(),
        `module.exports = async () => { throw new CustomHttpResponseError({ status: 418, headers: { 'x-teapot': 'yes', count: 2, gone: null }, body: { brew: 'tea' } }); };`,
      ),
    );
    expect(error.status).toBe(418);
    expect(error.custom).toEqual({ status: 418, headers: { 'x-teapot': 'yes', count: '2' }, body: { brew: 'tea' } });
    const bad = await rejection(
      run(
        rt(),
        `module.exports = async () => { throw new (require('@svc/errors').CustomHttpResponseError)({ status: 9999, body: 'x' }); };`,
      ),
    );
    // As the vendor's class does: a status that is no integer from 100 to 599 throws in its constructor.
    expect(bad.status).toBe(500);
    expect(bad.custom).toBeUndefined();
    expect(bad.detail).toMatch(/Error: status is not a valid integer$/);
  });

  it('answers any other error with 500 and a stack of the user’s own frames', async () => {
    const code = `// reactors/charge.js
function check(amount) {
  return [amount].map((a) => {
    if (a > 10) throw new TypeError('too much: ' + a);
  });
}
module.exports = async function (req) {
  await null;
  check(req.args.amount);
};`;
    const error = await rejection(run(rt(), code, { args: { amount: 11 } }, { filename: 'reactors/charge.js' }));
    expect(error.status).toBe(500);
    expect(error.title).toBe('User code error');
    // Where it was thrown, as a load error says it: the first frame of the user's file.
    expect(error.detail).toBe('reactors/charge.js:4:23: TypeError: too much: 11');
    const stack = error.userStack!;
    expect(stack.split('\n')[0]).toBe('TypeError: too much: 11');
    expect(stack).toContain('reactors/charge.js:4:');
    expect(stack).toContain('at check (reactors/charge.js:3:');
    expect(stack).toContain('reactors/charge.js:9:');
    expect(stack).not.toContain('worker.js');
    expect(stack).not.toContain('node:internal');
    expect(stack).not.toContain('/ses/');
    expect(stack).not.toContain('file://');
  });

  it('answers a thrown string, object or null with 500', async () => {
    const string = await rejection(run(rt(), `module.exports = async () => { throw 'nope'; };`));
    expect([string.status, string.detail]).toEqual([500, 'Error: a non-error was thrown: "nope"']);
    const object = await rejection(run(rt(), `module.exports = async () => { throw { code: 42 }; };`));
    expect([object.status, object.detail]).toEqual([500, 'Error: a non-error was thrown: {"code":42}']);
    const nothing = await rejection(run(rt(), `module.exports = async () => { throw null; };`));
    expect([nothing.status, nothing.detail]).toEqual([500, 'Error: a non-error was thrown: null']);
    const rejected = await rejection(run(rt(), `module.exports = () => Promise.reject({ message: 'plain' });`));
    expect([rejected.status, rejected.detail]).toEqual([500, 'Error: plain']);
  });
});

describe('limits', () => {
  it('stops an invocation over its timeout (408), replaces a process held by it and serves the next call', async () => {
    const rt = runtime();
    const instance = await load(
      rt,
      `module.exports = async (req) => { if (req.args.spin) for (;;) {} return 'next'; };`,
    );
    const started = performance.now();
    const error = await rejection(invoke(instance, { args: { spin: true } }, { timeoutMs: 300 }));
    const elapsed = performance.now() - started;
    expect(error.status).toBe(408);
    expect(error.detail).toBe('The code ran longer than its timeout of 300 ms and was stopped.');
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect((await invoke(instance, { args: { spin: false } })).value).toBe('next');
    expect(rt.processCount).toBe(1);
  });

  it('stops an async function that never settles (408)', async () => {
    const rt = runtime();
    const error = await rejection(run(rt, `module.exports = () => new Promise(() => {});`, {}, { timeoutMs: 200 }));
    expect(error.status).toBe(408);
    expect(error.title).toBe('Timed out');
  });

  it('stops a memory bomb at the sandbox’s heap limit (500) and keeps serving', async () => {
    const rt = runtime({ memoryMb: 64 });
    const instance = await load(
      rt,
      `module.exports = async (req) => {
  if (!req.args.bomb) return 'alive';
  const hoard = [];
  for (;;) hoard.push(new Array(100000).fill({ x: 1 }));
};`,
    );
    const error = await rejection(invoke(instance, { args: { bomb: true } }, { timeoutMs: 10_000 }));
    expect(error.status).toBe(500);
    expect(error.title).toBe('Out of memory');
    expect(error.detail).toContain('ran out of memory (limit 64 MB)');
    expect((await invoke(instance, { args: { bomb: false } })).value).toBe('alive');
    expect(await value(rt, `module.exports = async () => 'other';`)).toBe('other');
  });

  it('captures console output per invocation with the request id, at every level', async () => {
    const seen: LogEntry[] = [];
    const rt = runtime({ onLog: (entry) => seen.push(entry) });
    const instance = await load(
      rt,
      `module.exports = async (req) => {
  console.log('log', req.args.n, { a: 1 });
  console.info('info %s', 'x');
  console.warn('warn');
  console.error('error');
  console.debug('debug');
  return req.args.n;
};`,
    );
    const first = await invoke(instance, { args: { n: 1 } }, { requestId: 'req-1' });
    const second = await invoke(instance, { args: { n: 2 } }, { requestId: 'req-2' });
    const expected = (n: number, requestId: string): LogEntry[] => [
      { level: 'log', text: `log ${n} { a: 1 }`, instance: instance.id, requestId },
      { level: 'info', text: 'info x', instance: instance.id, requestId },
      { level: 'warn', text: 'warn', instance: instance.id, requestId },
      { level: 'error', text: 'error', instance: instance.id, requestId },
      { level: 'debug', text: 'debug', instance: instance.id, requestId },
    ];
    expect(first.logs).toEqual(expected(1, 'req-1'));
    expect(second.logs).toEqual(expected(2, 'req-2'));
    expect(seen).toEqual([...expected(1, 'req-1'), ...expected(2, 'req-2')]);
  });

  const CUT_AT_4_KIB = /… \[console output cut at 1000 lines \/ 4 KiB: the rest of this call's output is dropped\]$/;

  it('bounds console output at maxLogBytes per invocation, with a notice', async () => {
    const rt = runtime({ maxLogBytes: 4096 });
    const instance = await load(
      rt,
      `module.exports = async () => { const line = 'x'.repeat(1000); for (let i = 0; i < 1024; i++) console.log(line); return 'done'; };`,
    );
    for (let round = 0; round < 2; round++) {
      const result = await invoke(instance);
      expect(result.value).toBe('done');
      const texts = result.logs.map((entry) => entry.text);
      expect(texts.length).toBe(5);
      const last = texts.at(-1)!;
      expect(last).toMatch(CUT_AT_4_KIB);
      const kept = texts.join('').replace(CUT_AT_4_KIB, '');
      expect(kept.length).toBe(4096);
    }
  });

  // The budget is in bytes, and so is the cut: multi-byte output keeps no more than maxLogBytes.
  it('bounds multi-byte console output at maxLogBytes bytes', async () => {
    const rt = runtime({ maxLogBytes: 4096 });
    const result = await run(rt, `module.exports = async () => { console.log('é'.repeat(10000)); };`);
    const kept = result.logs.map((entry) => entry.text.replace(CUT_AT_4_KIB, '')).join('');
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(4096);
  });

  it('keeps the logs of a failed or timed-out invocation on the error', async () => {
    const rt = runtime();
    const failing = await rejection(
      run(
        rt,
        `module.exports = async () => { console.log('before'); throw new Error('after'); };`,
        {},
        { requestId: 'r-fail' },
      ),
    );
    expect(failing.logs).toEqual([{ level: 'log', text: 'before', instance: expect.any(String), requestId: 'r-fail' }]);
    const timedOut = await rejection(
      run(
        rt,
        `module.exports = async () => { console.warn('spinning'); await null; for (;;) {} };`,
        {},
        // Long enough that a loaded machine runs the code's first line before the call times out.
        { requestId: 'r-slow', timeoutMs: 2000 },
      ),
    );
    expect(timedOut.status).toBe(408);
    expect(timedOut.logs.map((entry) => [entry.level, entry.text, entry.requestId])).toEqual([
      ['warn', 'spinning', 'r-slow'],
    ]);
  });
});

describe('limits enforced from outside the code', () => {
  it('refuses a result over the 5 MB limit with a clear problem, and keeps serving', async () => {
    const rt = runtime();
    const instance = await load(
      rt,
      `module.exports = async (req) => req.args.big ? 'x'.repeat(50 * 1024 * 1024) : 'small';`,
    );
    const error = await rejection(invoke(instance, { args: { big: true } }));
    expect([error.status, error.title]).toEqual([500, 'Invalid result']);
    expect(error.detail).toBe("The function's result is 50 MB of JSON, over the 5 MB limit.");
    expect((await invoke(instance, { args: {} })).value).toBe('small');
  });

  it('bounds the req.svc calls one invocation has in flight', async () => {
    const rt = runtime({ maxSvcInFlight: 10 });
    let answered = 0;
    const svc: SvcHandler = async () => {
      await sleep(20);
      return ++answered;
    };
    const code = `module.exports = async (req) => {
  const calls = [];
  for (let i = 0; i < 12; i++) calls.push(req.svc.tokens.list({}).then(() => 'ok', (e) => e.name + ': ' + e.message));
  return Promise.all(calls);
};`;
    const outcomes = (await value(rt, code, {}, { svc })) as string[];
    expect(outcomes.slice(0, 10)).toEqual(Array(10).fill('ok'));
    expect(outcomes.slice(10)).toEqual(Array(2).fill('SvcApiError: Request failed with status code 429'));
    expect(answered).toBe(10);
  });

  it('clears the timers a call leaves behind when it returns', async () => {
    const rt = runtime();
    const instance = await load(
      rt,
      `let ticks = 0;
module.exports = async (req) => {
  if (req.args.leave) { setInterval(() => { ticks++; }, 1); setTimeout(() => { ticks += 1000; }, 50); }
  await new Promise((resolve) => setTimeout(resolve, 30));
  return ticks;
};`,
    );
    const atReturn = (await invoke(instance, { args: { leave: true } })).value as number;
    expect(atReturn).toBeGreaterThan(0);
    await sleep(150);
    expect((await invoke(instance, { args: {} })).value).toBe(atReturn);
  });

  it('replaces a process that keeps a core busy after its call returned, before the next call', async () => {
    // A short window (the default is a second, more than a collection lasts): the judgement, not its length, is tested.
    const rt = runtime({ windows: { busyForMs: 250 } });
    // Work that yields to the event loop without a timer: key derivation on Node's thread pool, for
    // ever. A call's own is dropped when it returns (boundary.test.ts); top-level code's is not, and
    // a call can set it going through a top-level timer.
    const instance = await load(
      rt,
      `const crypto = require('crypto');
let leave = false;
const derive = async () => { for (;;) await new Promise((r) => crypto.pbkdf2('x', 'y', 20000, 32, 'sha256', r)); };
setInterval(() => { if (leave) { leave = false; for (let i = 0; i < 4; i++) derive(); } }, 10);
module.exports = async (req) => {
  if (req.args.leave) leave = true;
  return 'done';
};`,
    );
    const [pid] = rt.pids;
    expect((await invoke(instance, { args: { leave: true } })).value).toBe('done');
    // Busy for longer than the window: however long that takes on a loaded machine, the calls that
    // come meanwhile are answered, and the process is then replaced.
    await expect
      .poll(async () => (await invoke(instance, { args: {} })).value === 'done' && !rt.pids.includes(pid!), {
        timeout: 15_000,
        interval: 200,
      })
      .toBe(true);
  });

  it('keeps a process whose collections after large calls keep it busy for a moment', async () => {
    const rt = runtime();
    // About 60 MB held, and each call leaves 200,000 objects behind: the collections that follow keep
    // the main thread and V8's helper busy for 100-200 ms after each call. That is the process's own
    // work, not work left running, and it ends.
    const instance = await load(
      rt,
      `const held = [];
for (let i = 0; i < 700000; i++) held.push({ i, s: 'item-' + i, t: [i, i + 1] });
module.exports = async () => {
  const garbage = [];
  for (let i = 0; i < 200000; i++) garbage.push({ i, s: 'g' + i });
  return held.length + garbage.length;
};`,
    );
    const [pid] = rt.pids;
    for (let i = 0; i < 8; i++) {
      expect((await invoke(instance, {})).value).toBe(900_000);
      await sleep(250);
    }
    expect(rt.pids).toContain(pid);
  });

  it('serves the next call elsewhere when a call leaves a loop that never yields, and stops that process', async () => {
    const rt = runtime({ windows: { stuckMs: 250 } });
    const instance = await load(
      rt,
      `module.exports = async (req) => {
  if (req.args.leave) Promise.resolve().then(function spin() { return Promise.resolve().then(spin); });
  return 'done';
};`,
    );
    const [pid] = rt.pids;
    expect((await invoke(instance, { args: { leave: true } })).value).toBe('done');
    // The emulator sees its probe go unanswered (the event, not a time: a loaded machine fires its ticks late).
    await expect
      .poll(() => rt.heldPids.includes(pid!) || !rt.pids.includes(pid!), { timeout: 20_000, interval: 10 })
      .toBe(true);
    expect((await invoke(instance, { args: {} })).value).toBe('done');
    await expect.poll(() => rt.pids.includes(pid!), { timeout: 10_000, interval: 50 }).toBe(false);
  });

  it('stops work left running when a call that never settles was given up on', async () => {
    const rt = runtime({ windows: { busyForMs: 250 } });
    const instance = await load(
      rt,
      `let spin = false;
setInterval(() => { if (spin) { const until = Date.now() + 30; while (Date.now() < until) {} } }, 1);
module.exports = async (req) => { if (req.args.hang) { spin = true; return new Promise(() => {}); } return 'ok'; };`,
    );
    const [pid] = rt.pids;
    expect((await rejection(invoke(instance, { args: { hang: true } }, { timeoutMs: 300 }))).status).toBe(408);
    await expect.poll(() => rt.pids.includes(pid!), { timeout: 8000, interval: 100 }).toBe(false);
    expect((await invoke(instance, { args: {} })).value).toBe('ok');
  });

  it('starts what waits for room in the budget once a process is only booting or loading no more', async () => {
    const rt = runtime({ maxProcesses: 2 });
    const loads = ['a', 'b', 'c'].map((name) =>
      rt.load({
        id: freshId(name),
        version: 1,
        code: `module.exports = async () => '${name}';`,
        filename: `${name}.js`,
      }),
    );
    const instances = await Promise.all(loads);
    expect(await Promise.all(instances.map(async (instance) => (await invoke(instance)).value))).toEqual([
      'a',
      'b',
      'c',
    ]);
    expect(rt.processCount).toBeLessThanOrEqual(2);
  });

  it('keeps reactors of three tenants within the process budget, each owner in processes of its own', async () => {
    const rt = runtime({ maxProcesses: 4 });
    const instances = [];
    for (let i = 0; i < 12; i++) {
      instances.push(
        await rt.load({
          id: freshId('many'),
          version: 1,
          code: `module.exports = async () => ${i};`,
          filename: `r${i}.js`,
          tenant: `tenant-${i % 3}`,
        }),
      );
    }
    let most = 0;
    const gauge = setInterval(() => (most = Math.max(most, rt.processCount)), 5);
    const values = await Promise.all(
      instances.map(async (instance) => (await invoke(instance, {}, { timeoutMs: 10_000 })).value),
    );
    clearInterval(gauge);
    expect(values).toEqual(instances.map((_, i) => i));
    expect(Math.max(most, rt.processCount)).toBeLessThanOrEqual(4);
  });
});

describe('concurrency', () => {
  const BUSY = `module.exports = async (req) => {
  if (req.args.busyMs) { const until = Date.now() + req.args.busyMs; while (Date.now() < until) {} }
  if (req.args.spin) for (;;) {}
  await new Promise((resolve) => setTimeout(resolve, req.args.ms ?? 0));
  return req.args.answer;
};`;

  it('runs overlapping calls that wait side by side in one process', async () => {
    const rt = runtime();
    // Each call returns only once all four are in: run one after another, the first would wait until its timeout.
    const instance = await load(
      rt,
      `let arrived = 0;
module.exports = async (req) => {
  arrived++;
  while (arrived < 4) await new Promise((resolve) => setTimeout(resolve, 5));
  return req.args.answer;
};`,
    );
    const results = await Promise.all(
      [1, 2, 3, 4].map((n) => invoke(instance, { args: { answer: n } }, { timeoutMs: 15_000 })),
    );
    expect(results.map((result) => result.value)).toEqual([1, 2, 3, 4]);
    expect(rt.processCount).toBe(1);
    expect(instance.processCount).toBe(1);
  });

  it('serves new calls from a second process while the first is held by code that does not yield, and reaps it when idle', async () => {
    const rt = runtime({ idleMs: 300 });
    const instance = await load(rt, BUSY);
    // Held for 3 s: long enough, even on a loaded machine, for the second call to go elsewhere first.
    const held = invoke(instance, { args: { busyMs: 3000, answer: 'busy' } }, { timeoutMs: 15_000 });
    await expect.poll(() => rt.heldPids.length, { timeout: 20_000, interval: 10 }).toBe(1);
    expect((await invoke(instance, { args: { answer: 'beside' } })).value).toBe('beside');
    // Served by a second process (the first, held, could not answer it), not after the first call.
    expect(rt.processCount).toBe(2);
    expect((await held).value).toBe('busy');
    await expect.poll(() => rt.processCount, { timeout: 10_000, interval: 50 }).toBe(1);
  });

  it('fails the calls held beside a call that never yields with a problem naming it, and serves the next ones', async () => {
    const rt = runtime();
    const instance = await load(rt, BUSY);
    const beside = invoke(instance, { args: { ms: 400, answer: 1 } });
    const spinning = invoke(instance, { args: { spin: true } }, { timeoutMs: 800 });
    await sleep(300);
    const after = invoke(instance, { args: { answer: 3 } });
    const [first, second, third] = await Promise.allSettled([beside, spinning, after]);
    expect(second.status === 'rejected' && (second.reason as { status: number }).status).toBe(408);
    expect(first.status).toBe('rejected');
    const problem = (first as PromiseRejectedResult).reason as { status: number; detail: string };
    expect(problem.status).toBe(500);
    expect(problem.detail).toContain(`${FILENAME} ran past its timeout of 800 ms without yielding`);
    expect(third.status === 'fulfilled' && third.value.value).toBe(3);
    expect((await invoke(instance, { args: { answer: 5 } })).value).toBe(5);
  });
});

describe('hot swap', () => {
  it('finishes calls in flight on the old version, serves new calls from the new one, survives a bad version', async () => {
    const rt = runtime();
    const id = freshId('swap');
    const code = (answer: string) =>
      `module.exports = async (req) => { await new Promise((r) => setTimeout(r, req.args.ms)); return ${JSON.stringify(answer)}; };`;
    const v1 = await rt.load({ id, version: 1, code: code('v1'), filename: FILENAME });
    const inFlight = invoke(v1, { args: { ms: 600 } });
    await sleep(50);
    const v2 = await rt.load({ id, version: 2, code: code('v2'), filename: FILENAME });
    expect(v2).not.toBe(v1);
    expect(rt.get(id)).toBe(v2);
    expect(rt.get(id)!.version).toBe(2);
    expect((await invoke(rt.get(id)!, { args: { ms: 1 } })).value).toBe('v2');
    expect((await inFlight).value).toBe('v1');
    // A call that took the old version before the swap runs on the new one.
    expect((await invoke(v1, { args: { ms: 1 } })).value).toBe('v2');

    // A version that does not load leaves the current one serving.
    const error = await rejection(
      rt.load({ id, version: 3, code: `module.exports = async ( => 1;`, filename: FILENAME }),
    );
    expect(error.status).toBe(422);
    expect(error.detail).toMatch(new RegExp(`^${FILENAME}:1:\\d+: SyntaxError`));
    expect(rt.get(id)).toBe(v2);
    expect((await invoke(rt.get(id)!, { args: { ms: 1 } })).value).toBe('v2');

    // The same id, version and code is the same instance; the same version with new code is not.
    expect(await rt.load({ id, version: 2, code: code('v2'), filename: FILENAME })).toBe(v2);
    const v2b = await rt.load({ id, version: 2, code: code('v2b'), filename: FILENAME });
    expect(v2b).not.toBe(v2);
    expect((await invoke(v2b, { args: { ms: 1 } })).value).toBe('v2b');

    await rt.unload(id);
    expect(rt.get(id)).toBeUndefined();
    expect(v2b.processCount).toBe(0);
    const unloaded = await rejection(invoke(v2b, { args: { ms: 1 } }));
    expect([unloaded.status, unloaded.detail]).toEqual([
      409,
      `${FILENAME} was unloaded (deleted) before this call began.`,
    ]);
  });

  it('makes current the version asked for last, also when it is one loading or loaded already', async () => {
    const rt = runtime();
    const id = freshId('asked');
    const code = (answer: string) => `module.exports = async () => ${JSON.stringify(answer)};`;
    const v1 = rt.load({ id, version: 1, code: code('v1'), filename: FILENAME });
    const v2 = rt.load({ id, version: 2, code: code('v2'), filename: FILENAME });
    const again = rt.load({ id, version: 1, code: code('v1'), filename: FILENAME });
    await Promise.all([v1, v2, again]);
    expect(rt.get(id)!.version).toBe(1);
    expect((await invoke(rt.get(id)!)).value).toBe('v1');
  });

  it('loads a fixed version in a fresh process while the old version is held by a loop', async () => {
    const rt = runtime();
    const id = freshId('fix');
    const old = await rt.load({
      id,
      version: 1,
      code: `module.exports = async () => { for (;;) {} };`,
      filename: FILENAME,
    });
    const held = rejection(invoke(old, {}, { timeoutMs: 3000 }));
    await expect.poll(() => rt.heldPids.length, { timeout: 20_000, interval: 10 }).toBe(1);
    const fixed = await rt.load({ id, version: 2, code: `module.exports = async () => 'fixed';`, filename: FILENAME });
    expect((await invoke(fixed)).value).toBe('fixed');
    expect((await held).status).toBe(408);
  });

  it('shares one load between concurrent loads of the same id and version', async () => {
    const rt = runtime();
    const spec = { id: freshId('same'), version: 'a1', code: `module.exports = async () => 'a1';`, filename: FILENAME };
    const [a, b] = await Promise.all([rt.load(spec), rt.load(spec)]);
    expect(a).toBe(b);
    expect((await invoke(a)).value).toBe('a1');
  });

  // The load asked for last becomes current, not the one that finishes last: saving v2 (slow
  // top-level code) and then v3 leaves v3 serving.
  it('makes the latest requested version current when loads overlap', async () => {
    const rt = runtime();
    const id = freshId('race');
    const slow = `const until = Date.now() + 300; while (Date.now() < until) {}\nmodule.exports = async () => 'v2';`;
    const v2 = rt.load({ id, version: 2, code: slow, filename: FILENAME });
    const v3 = rt.load({ id, version: 3, code: `module.exports = async () => 'v3';`, filename: FILENAME });
    await Promise.all([v2, v3]);
    expect(rt.get(id)!.version).toBe(3);
  });

  it('answers a clear problem when a new process cannot load code that loaded before, and still unloads', async () => {
    const rt = runtime();
    // Far enough ahead that a loaded machine (both cores busy with other work) still loads it the
    // first time: the code's own clock is the one thing that differs between its two processes.
    const deadline = Date.now() + 4000;
    const instance = await load(
      rt,
      `if (Date.now() > ${deadline}) throw new Error('no longer loads');
module.exports = async () => 'ok';`,
    );
    expect((await invoke(instance)).value).toBe('ok');
    await sleep(Math.max(0, deadline - Date.now()) + 50);
    // The process goes away (a crash); the next call's fresh process must load the code again.
    process.kill(rt.pids[0]!, 'SIGKILL');
    while (rt.processCount > 0) await sleep(10);
    const error = await rejection(invoke(instance));
    expect(error.status).toBe(500);
    expect(error.detail).toContain('no longer loads');
    const unloaded = await Promise.race([
      rt.unload(instance.id).then(() => 'unloaded'),
      sleep(1000).then(() => 'still waiting'),
    ]);
    expect(unloaded).toBe('unloaded');
  });
});

describe('req.svc', () => {
  const rt = sharedRuntime();

  it('is null when no svc is configured', async () => {
    expect(await value(rt(), `module.exports = async (req) => [req.svc === null, 'svc' in req];`)).toEqual([
      true,
      true,
    ]);
    expect(await value(rt(), `module.exports = async (req) => req.svc === null;`, {}, { svc: null })).toBe(true);
  });

  it('sends each call with its method and params to the handler, and returns its answer', async () => {
    const calls: [SvcMethod, unknown][] = [];
    const svc: SvcHandler = async (method, params) => {
      calls.push([method, params]);
      return { answered: method, params };
    };
    const outcome = await value(
      rt(),
      `module.exports = async (req) => [
  await req.svc.tokens.create({ type: 'token', data: 'secret' }),
  await req.svc.tokens.retrieve('tok_1'),
  await req.svc.tokens.delete('tok_1'),
  await req.svc.tokens.list({ size: 2 }),
  await req.svc.tokens.list(),
  await req.svc.tokenize({ card: { type: 'card', data: { number: '4242' } } }),
  await req.svc.detokenize('{{ tok_1 }}'),
];`,
      {},
      { svc },
    );
    expect(calls).toEqual([
      ['tokens.create', { type: 'token', data: 'secret' }],
      ['tokens.retrieve', 'tok_1'],
      ['tokens.delete', 'tok_1'],
      ['tokens.list', { size: 2 }],
      ['tokens.list', {}],
      ['tokenize', { card: { type: 'card', data: { number: '4242' } } }],
      ['detokenize', '{{ tok_1 }}'],
    ]);
    expect(outcome).toEqual(calls.map(([method, params]) => ({ answered: method, params })));
  });

  // The vendor's JS client rejects with BasisTheoryApiError (here SvcApiError): status, and the problem as data.
  it('rejects a refused call with SvcApiError carrying the status and the problem', async () => {
    const code = `module.exports = async (req) => {
  try {
    await req.svc.detokenize('{{ t }}');
    return 'no error';
  } catch (e) {
    return [e.name, e.message, e.status ?? null, e.data ?? null, e instanceof SvcApiError, e instanceof require('@svc/errors').BasisTheoryApiError, e instanceof Error];
  }
};`;
    const failWith =
      (problem: unknown): SvcHandler =>
      async () => {
        throw problem;
      };
    for (const [status, title, detail] of [
      [403, 'Forbidden', 'no'],
      [400, 'Bad Request', 'bad token'],
      [401, 'Unauthorized', 'who?'],
      [404, 'Not Found', 'No token with id t.'],
    ] as const) {
      expect(await value(rt(), code, {}, { svc: failWith({ status, title, detail }) })).toEqual([
        'SvcApiError',
        `Request failed with status code ${status}`,
        status,
        { status, title, detail },
        true,
        true,
        true,
      ]);
    }
    // A host failure without a problem shape shows no host detail.
    expect(await value(rt(), code, {}, { svc: failWith(new Error('host internals: /srv/secret')) })).toEqual([
      'SvcApiError',
      'Request failed with status code 500',
      500,
      { status: 500, title: 'Internal server error', detail: 'req.svc failed' },
      true,
      true,
      true,
    ]);
  });

  it('fails the invocation with the platform status when user code lets the error through', async () => {
    const error = await rejection(
      run(
        rt(),
        `module.exports = async (req) => req.svc.tokens.retrieve('t');`,
        {},
        {
          svc: async () => {
            throw { status: 403, title: 'Forbidden', detail: 'token:read is needed' };
          },
        },
      ),
    );
    // Not a platform error class: the code failed, as any other error it lets through.
    expect(error.status).toBe(500);
    expect(error.detail).toMatch(/SvcApiError: Request failed with status code 403$/);
  });

  it('is frozen: user code cannot replace its methods', async () => {
    expect(
      await value(
        rt(),
        `module.exports = async (req) => {
  const out = [];
  for (const f of [() => { req.svc.tokenize = async () => 'fake'; }, () => { req.svc.tokens.retrieve = async () => 'fake'; }, () => { req.svc.extra = 1; }, () => { delete req.svc.detokenize; }]) {
    try { f(); out.push('changed'); } catch (e) { out.push(e.name); }
  }
  out.push(Object.isFrozen(req.svc), Object.isFrozen(req.svc.tokens), await req.svc.tokenize('x'));
  return out;
};`,
        {},
        { svc: async () => 'real' },
      ),
    ).toEqual(['TypeError', 'TypeError', 'TypeError', 'TypeError', true, true, 'real']);
  });
});

describe('req.svc over the real token service', () => {
  const CARD = {
    number: '4242424242424242',
    expiration_month: 12,
    expiration_year: new Date().getUTCFullYear() + 2,
    cvc: '123',
  };
  const CODE = `module.exports = async (req) => {
  const token = await req.svc.tokenize({ type: 'card', data: req.args.card });
  try {
    const revealed = await req.svc.detokenize({ card: '{{ ' + token.id + ' }}' });
    return { id: token.id, type: token.type, revealed };
  } catch (e) {
    return { id: token.id, type: token.type, error: [e.name, e instanceof SvcApiError, e.status, e.data.detail] };
  }
};`;

  async function setup(rt: Runtime) {
    const store = await Store.open({ inMemory: true });
    const services = createServices(store, { cipher: new Cipher(randomBytes(32)), runtime: rt, emit: () => {} });
    const tenant = await services.tenants.create('t');
    const application = services.applications.authenticate(tenant.private_key)!;
    expect(application.type).toBe('private');
    return { services, tenantId: tenant.id, application };
  }

  it('lets user code tokenize a card and detokenize it back', async () => {
    const rt = runtime();
    const { services, tenantId, application } = await setup(rt);
    try {
      const instance = await load(rt, CODE);
      const result = await invoke(
        instance,
        { args: { card: CARD } },
        { svc: svcHandler(services.tokens, () => ({ tenantId, application }), 'reactor test') },
      );
      const outcome = result.value as { id: string; type: string; revealed: { card: unknown } };
      expect(outcome.type).toBe('card');
      expect(outcome.revealed.card).toEqual(CARD);
      expect(services.tokens.get({ caller: { tenantId, application } }, outcome.id)).toMatchObject({
        id: outcome.id,
        type: 'card',
      });
    } finally {
      services.dispose();
    }
  });

  it('refuses detokenize to an Application without token:use, as an SvcApiError in user code', async () => {
    const rt = runtime();
    const { services, tenantId, application } = await setup(rt);
    try {
      const created = await services.applications.create(
        { tenantId, application },
        { name: 'no use', type: 'private', permissions: ['token:create', 'token:read'] },
      );
      const limited = services.applications.authenticate(created.key!)!;
      expect(limited.permissions).not.toContain('token:use');
      const instance = await load(rt, CODE);
      const result = await invoke(
        instance,
        { args: { card: CARD } },
        { svc: svcHandler(services.tokens, () => ({ tenantId, application: limited }), 'reactor test') },
      );
      const outcome = result.value as { id: string; error: unknown[] };
      expect(outcome.error).toEqual(['SvcApiError', true, 403, expect.stringContaining('token:use')]);
    } finally {
      services.dispose();
    }
  });
});

describe('retiring an instance', () => {
  it('unloads its code once the calls in flight are done', async () => {
    const rt = runtime();
    const instance = await load(
      rt,
      `module.exports = async () => new Promise((resolve) => setTimeout(() => resolve(1), 200));`,
    );
    const calls = Promise.all([1, 2, 3].map(() => invoke(instance)));
    await sleep(50);
    const unloaded = rt.unload(instance.id);
    expect((await calls).map((result) => result.value)).toEqual([1, 1, 1]);
    await unloaded;
    expect(instance.processCount).toBe(0);
  });
});
