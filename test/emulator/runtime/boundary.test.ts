/**
 * The sandbox boundary, attacked from user code. One describe per class of escape a review found
 * in the worker-thread sandbox (each with that review's payloads and other ways into the same
 * class), then what a further attack found. Every test ends by checking that the runtime still
 * serves another tenant's code.
 *
 * Tests whose comment describes "an attack on an earlier version" each closed a real escape.
 * Needs the build (`npm run build`): sandbox processes run from dist/.
 */
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Runtime } from '../../../src/emulator/runtime/index.js';
import {
  CAPTURE_QUEUED,
  FIND_NETWORK_OBJECTS,
  LISTEN_THROUGH_HANDLES,
  accepts,
  closingPort,
  fdTargets,
  listeners,
  listeningSockets,
  tlsServer,
} from './attack-kit.js';
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

const OTHER_CODE = `module.exports = async function (req) {
  return { doubled: req.args.n * 2, text: Buffer.from('served').toString('base64'), hash: require('crypto').createHash('sha256').update('x').digest('hex').slice(0, 8) };
};`;

/** Another tenant's code loads and answers correctly on the same runtime. */
/** The share of one core a process used over `ms` (0 once it is gone), from /proc. */
async function busyShare(pid: number, ms: number): Promise<number> {
  const ticks = () => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
        .replace(/^.*\) /, '')
        .split(' ');
      return Number(fields[11]) + Number(fields[12]);
    } catch {
      return undefined;
    }
  };
  const before = ticks();
  await sleep(ms);
  const after = ticks();
  return before === undefined || after === undefined ? 0 : (after - before) / (ms / 10);
}

async function servesOtherTenant(rt: Runtime): Promise<void> {
  const instance = await rt.load({
    id: freshId('other'),
    version: 1,
    code: OTHER_CODE,
    filename: 'reactors/other.js',
    tenant: 'other',
  });
  try {
    expect((await invoke(instance, { args: { n: 21 } })).value).toEqual({
      doubled: 42,
      text: 'c2VydmVk',
      hash: '2d711642',
    });
  } finally {
    await rt.unload(instance.id);
  }
}

/** The sandbox processes' pids (the worker-thread design ran user code in this very process). */
function sandboxPids(rt: Runtime): number[] {
  return (rt as { pids?: number[] }).pids ?? [process.pid];
}

/** Loads code for a tenant under a fresh id. */
function loadFor(rt: Runtime, tenant: string, code: string, filename = FILENAME) {
  return rt.load({ id: freshId(), version: 1, code, filename, tenant });
}

describe('https: the network stack behind it (net.Server, net.Socket, TLSSocket, file descriptors)', () => {
  const rt = sharedRuntime();

  // The review's payloads, each from user code: a class of Node's network stack reached from
  // `require('https')`, then used to listen, to connect in plain TCP or to a Unix socket, or to
  // wrap a file descriptor of the process (the emulator's listening socket among them).
  it.each([
    [
      'net.Server (the parent of https.Server) listening on a TCP port',
      `const NetServer = Object.getPrototypeOf(require('https').Server);
       const server = new NetServer(() => {});
       await new Promise((resolve, reject) => { server.on('error', reject); server.listen(0, '127.0.0.1', resolve); });
       return 'listening on ' + server.address().port;`,
    ],
    [
      'net.Server listening on a file path (making a file)',
      `const NetServer = Object.getPrototypeOf(require('https').Server);
       const server = new NetServer(() => {});
       await new Promise((resolve, reject) => { server.on('error', reject); server.listen(req.args.path, resolve); });
       return 'listening on ' + req.args.path;`,
    ],
    [
      'a plain net.Socket made as a TLSSocket (Reflect.construct) from globalAgent.createConnection',
      `const tlsSocket = require('https').globalAgent.createConnection({ host: '127.0.0.1', port: req.args.port });
       tlsSocket.on('error', () => {});
       const TLSSocket = tlsSocket.constructor;
       const NetSocket = Object.getPrototypeOf(TLSSocket.prototype).constructor;
       const plain = Reflect.construct(NetSocket, [], TLSSocket);
       await new Promise((resolve, reject) => { plain.on('error', reject); plain.connect(req.args.port, '127.0.0.1', resolve); });
       return 'connected in plain TCP';`,
    ],
    [
      'a Unix socket through the same classes',
      `const tlsSocket = require('https').globalAgent.createConnection({ host: '127.0.0.1', port: 9 });
       tlsSocket.on('error', () => {});
       const NetSocket = Object.getPrototypeOf(tlsSocket.constructor.prototype).constructor;
       const plain = Reflect.construct(NetSocket, [], tlsSocket.constructor);
       await new Promise((resolve, reject) => { plain.on('error', reject); plain.connect(req.args.unixPath, resolve); });
       return 'connected to a Unix socket';`,
    ],
    [
      "the emulator's listening socket taken over by fd (Server.listen({ fd }))",
      `const NetServer = Object.getPrototypeOf(require('https').Server);
       const server = new NetServer((socket) => socket.end('stolen'));
       await new Promise((resolve, reject) => { server.on('error', reject); server.listen({ fd: req.args.fd }, resolve); });
       return 'listening on the emulator fd';`,
    ],
    [
      "the emulator's listening socket wrapped by fd (new Socket({ fd }))",
      `const tlsSocket = require('https').globalAgent.createConnection({ host: '127.0.0.1', port: 9 });
       tlsSocket.on('error', () => {});
       const NetSocket = Object.getPrototypeOf(tlsSocket.constructor.prototype).constructor;
       const socket = new NetSocket({ fd: req.args.fd });
       return 'wrapped fd ' + req.args.fd + ': ' + typeof socket.write;`,
    ],
  ])('%s: fails in user code, and nothing happens at the OS level', async (_name, body) => {
    const target = await listeners();
    const outcome = await value(rt(), attempt(body), {
      args: { port: target.tcpPort, unixPath: target.unixPath, path: target.freshPath, fd: target.tcpFd },
    });
    expect(outcome).toEqual({ threw: expect.stringMatching(/^TypeError: /) });
    await sleep(50);
    expect(target.counts).toEqual({ tcp: 0, unix: 0 });
    expect(existsSync(target.freshPath)).toBe(false);
    await servesOtherTenant(rt());
  });

  it('hands user code no socket, server, native handle or real ClientRequest, from the module or a request in flight', async () => {
    const closing = await closingPort();
    const outcome = await value(
      rt(),
      `module.exports = async function (req) {
        const https = require('https');
        const request = https.request({ hostname: '127.0.0.1', port: req.args.port, path: '/walk', method: 'POST' });
        const socketEvents = [];
        request.on('socket', (s) => socketEvents.push(typeof s));
        const failed = new Promise((resolve) => request.on('error', (e) => resolve(Object.getOwnPropertyNames(e).sort().join())));
        request.write('partial body');
        const walk = ${FIND_NETWORK_OBJECTS}([['https', https], ['request', request], ['agent', new https.Agent({ keepAlive: true })], ['globalAgent', https.globalAgent]]);
        return {
          direct: [typeof request.socket, typeof request.connection, typeof request.agent, typeof request.res, typeof request._handle,
            typeof https.Server, typeof https.createServer, typeof https.globalAgent.createConnection, Object.getPrototypeOf(https.Agent) === Function.prototype],
          socketEvents,
          found: walk.found,
          walked: walk.walked > 100,
          error: await failed,
        };
      };`,
      { args: { port: closing } },
    );
    expect(outcome).toEqual({
      direct: [
        'undefined',
        'undefined',
        'undefined',
        'undefined',
        'undefined',
        'undefined',
        'undefined',
        'undefined',
        true,
      ],
      socketEvents: [],
      found: [],
      walked: true,
      error: expect.stringMatching(/^(code,)?message,stack$/),
    });
    await servesOtherTenant(rt());
  });

  // An attack on an earlier version of this sandbox (not an escape; found on the way): outbound HTTPS, which the platform allows, gets no
  // answer. The facade's request is a Writable with autoDestroy on: once its body is written
  // ('finish'), the stream destroys itself, and its _destroy destroys the real ClientRequest before
  // the response arrives. So `https.get` and every `request.end()` hang until the call times out.
  it('an HTTPS request to a real TLS server gets its answer, and the answer holds nothing of the network stack', async () => {
    const server = await tlsServer();
    const outcome = await value(
      rt(),
      `module.exports = async function (req) {
        const https = require('https');
        const response = await new Promise((resolve, reject) => {
          const request = https.get({ hostname: '127.0.0.1', port: req.args.port, path: '/walk', ca: req.args.ca }, resolve);
          request.on('error', reject);
        });
        let body = '';
        for await (const chunk of response) body += chunk;
        const walk = ${FIND_NETWORK_OBJECTS}([['response', response]]);
        return { body, status: response.statusCode, direct: [typeof response.socket, typeof response.req, typeof response.client, typeof response.connection], found: walk.found };
      };`,
      { args: { port: server.port, ca: server.ca } },
      { timeoutMs: 5000 },
    );
    expect(outcome).toEqual({
      body: 'answered /walk',
      status: 200,
      direct: ['undefined', 'undefined', 'undefined', 'undefined'],
      found: [],
    });
    await servesOtherTenant(rt());
  });

  it('gives a sandbox process no fd of the emulator: its stdout is /dev/null and it owns no listening socket', async () => {
    const target = await listeners();
    await servesOtherTenant(rt());
    const emulatorListener = readlinkSync(`/proc/self/fd/${target.tcpFd}`);
    for (const pid of sandboxPids(rt())) {
      const fds = fdTargets(pid);
      expect([...fds.values()]).not.toContain(emulatorListener);
      expect(fds.get(0)).toBe('/dev/null');
      expect(fds.get(1)).toBe('/dev/null');
      expect(listeningSockets(pid)).toEqual([]);
    }
  });

  // An attack on an earlier version of this sandbox (closes nothing but a payload): the facade hides Node's sockets, but Node's own internals
  // still queue them where user code can look. A TLS socket that closes runs
  // `setImmediate(destroySSL, socket)`; the Immediate sits in the one immediate queue of the
  // process, linked through `_idlePrev`/`_idleNext` to the Immediate user code gets back from its own
  // setImmediate, with the socket in `_argv`. From the TLSSocket: its class and net.Socket, and
  // through `new TLSSocket(null, { pipe })._handle._parent` the native TCP and Pipe handles, whose
  // bind/listen are not the patched `Server.prototype.listen`: a listening TCP port, a Unix socket
  // made at any path (a file written under the permission model), `new Socket({ fd: 2 })` writing
  // to the emulator's stderr pipe (the text it reads to say why a process died). (The connect guard
  // held: a plain connect still needs the `outbound` flag.)
  it('Node’s own immediate queue hands user code no TLSSocket: no TCP listener, no Unix socket file, no write to fd 2', async () => {
    const closing = await closingPort();
    const target = await listeners();
    const outcome = (await value(
      rt(),
      attempt(`${CAPTURE_QUEUED}
        const out = { captured: found.map((o) => o && o.constructor && o.constructor.name) };
        ${LISTEN_THROUGH_HANDLES}
        try {
          const stderr = new NetSocket({ fd: 2, readable: false, writable: true });
          stderr.write('FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory (forged)\\n');
          out.fd2 = 'written';
        } catch (e) { out.fd2 = e.name; }
        try { new NetSocket({ fd: 3 }); out.fd3 = 'wrapped'; } catch (e) { out.fd3 = e.name; }
        return out;`),
      { args: { closingPort: closing, path: target.freshPath } },
    )) as { value?: { captured: string[]; port?: number } };
    const port = outcome.value?.port;
    expect(sandboxPids(rt()).flatMap(listeningSockets)).toEqual([]);
    expect(port === undefined ? false : await accepts(port)).toBe(false);
    expect(existsSync(target.freshPath)).toBe(false);
    expect(outcome.value?.captured ?? []).toEqual([]);
    await servesOtherTenant(rt());
  });
});

describe('crypto: native code (setEngine, FIPS switches)', () => {
  const rt = sharedRuntime();

  it.each([
    [
      "require('crypto').setEngine(path)",
      `return typeof require('crypto').setEngine === 'function' ? (require('crypto').setEngine('/nonexistent/engine.so'), 'dlopen attempted') : 'no setEngine';`,
    ],
    [
      "require('node:crypto'), destructured",
      `const { setEngine, setFips } = require('node:crypto'); return [typeof setEngine, typeof setFips].join();`,
    ],
    [
      'any function named setEngine, setFips or dlopen anywhere in reach of the built-ins',
      `const seen = new Set(); const names = [];
       const queue = ['crypto', 'buffer', 'util', 'stream', 'https', 'url', 'querystring'].map((m) => require(m));
       queue.push(require('crypto').webcrypto, require('crypto').createHash('sha256'), require('crypto').createSecretKey(Buffer.alloc(8)), Buffer, performance);
       for (let i = 0; i < queue.length && seen.size < 50000; i++) {
         const o = queue[i];
         if ((typeof o !== 'object' && typeof o !== 'function') || o === null || seen.has(o)) continue;
         seen.add(o);
         if (typeof o === 'function' && ['setEngine', 'setFips', 'dlopen', 'binding'].includes(o.name)) names.push(o.name);
         queue.push(Object.getPrototypeOf(o));
         for (const k of Reflect.ownKeys(o)) { const d = Object.getOwnPropertyDescriptor(o, k); if (d && 'value' in d) queue.push(d.value); else if (d) queue.push(d.get, d.set); }
       }
       return names.length ? names.join() : 'none';`,
    ],
  ])('%s: unreachable', async (_name, body) => {
    const outcome = await value(rt(), attempt(body));
    expect(outcome).toEqual({ value: expect.stringMatching(/^(no setEngine|undefined,undefined|none)$/) });
    await servesOtherTenant(rt());
  });

  it('runs sandbox processes under the permission model (no addons, no engines, no writes) even if a switch were reached', async () => {
    await servesOtherTenant(rt());
    for (const pid of sandboxPids(rt())) {
      const flags = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      expect(flags.some((flag) => flag === '--permission' || flag === '--experimental-permission')).toBe(true);
      expect(
        flags.some(
          (flag) =>
            flag.startsWith('--allow-fs-write') || flag === '--allow-addons' || flag === '--allow-child-process',
        ),
      ).toBe(false);
    }
  });
});

describe('memory, CPU and the process budget', () => {
  it.each([
    ['a 30-million-element array of doubles', 'globalThis.keep = new Array(30e6).fill(1.5);'],
    [
      'four filled 96 MB Buffers (outside the heap)',
      'const keep = []; for (let i = 0; i < 4; i++) keep.push(Buffer.alloc(96 * 1024 * 1024, 1)); globalThis.keep = keep;',
    ],
    [
      'filled typed arrays on ArrayBuffers',
      'const keep = []; for (let i = 0; i < 8; i++) keep.push(new Uint32Array(16 * 1024 * 1024).fill(7)); globalThis.keep = keep;',
    ],
    ['a Map grown without end', 'const m = new Map(); for (let i = 0; ; i++) m.set(i, { i, s: String(i) });'],
  ])('%s: the call fails as out of memory, the emulator and the other tenant are untouched', async (_name, bomb) => {
    const rt = runtime({ memoryMb: 64 });
    const error = await rejection(
      run(rt, `module.exports = async () => { ${bomb} return 'survived'; };`, {}, { timeoutMs: 15_000 }),
    );
    expect(error.status).toBe(500);
    expect(error.detail).toMatch(/out of memory/i);
    await servesOtherTenant(rt);
    expect(await value(rt, 'module.exports = async () => "the same tenant again";')).toBe('the same tenant again');
  });

  it.each([
    ['a 50 MB string', `'x'.repeat(50 * 1024 * 1024)`],
    ['6 MB of JSON in many small strings', `Array.from({ length: 60000 }, (_, i) => 'y'.repeat(100) + i)`],
    ['a multi-byte string under 5 million characters but over 5 MB', `'€'.repeat(2 * 1024 * 1024)`],
  ])('refuses %s as a result: 500 Invalid result, the other tenant served', async (_name, expression) => {
    const rt = runtime();
    const error = await rejection(run(rt, `module.exports = async () => ${expression};`, {}, { timeoutMs: 10_000 }));
    expect(error.status).toBe(500);
    expect(error.title).toBe('Invalid result');
    expect(error.detail).toMatch(/over the 5 MB limit/);
    await servesOtherTenant(rt);
  });

  it.each([
    ['a busy setInterval', `setInterval(() => { const end = Date.now() + 30; while (Date.now() < end); }, 1);`],
    [
      'a busy setImmediate chain',
      `const spin = () => { const end = Date.now() + 30; while (Date.now() < end); setImmediate(spin); }; setImmediate(spin);`,
    ],
    ['a loop that never yields, started by a timer', `setTimeout(() => { for (;;); }, 20);`],
    [
      'a microtask storm that never yields',
      `setTimeout(() => { const again = () => Promise.resolve().then(again); again(); }, 20);`,
    ],
  ])(
    '%s left running after the call returned burns no core (cleared, or its process stopped); the next calls are served',
    async (_name, leftover) => {
      const rt = runtime();
      const spinner = await load(rt, `module.exports = async () => { ${leftover} return 'returned'; };`);
      expect((await invoke(spinner)).value).toBe('returned');
      const [pid] = sandboxPids(rt);
      // Cleared at once, or its process stopped once the watch has seen enough (longer on a loaded machine).
      await expect.poll(() => busyShare(pid!, 500), { timeout: 15_000, interval: 0 }).toBeLessThan(0.2);
      await servesOtherTenant(rt);
      expect(await value(rt, 'module.exports = async () => "fresh";')).toBe('fresh');
    },
  );

  it('40 reactors of one tenant never mean more than maxProcesses processes, each of few threads, and all answer', async () => {
    const rt = runtime({ maxProcesses: 4 });
    const instances = [];
    for (let i = 0; i < 40; i++) instances.push(await loadFor(rt, 'many', `module.exports = async () => ${i};`));
    expect(rt.processCount).toBeLessThanOrEqual(4);
    for (const [i, instance] of instances.slice(-4).entries()) expect((await invoke(instance)).value).toBe(36 + i);
    expect(rt.processCount).toBeLessThanOrEqual(4);
    for (const pid of sandboxPids(rt)) {
      expect(pid).not.toBe(process.pid);
      // Node's own threads (V8 platform, libuv pool), not one per reactor.
      expect(Number(/Threads:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])).toBeLessThan(20);
    }
    await servesOtherTenant(rt);
  }, 30_000); // 40 cold starts of a sandbox process, ~150 ms each on a quiet host, more on a loaded one

  it('tenants beyond maxProcesses share the budget: never more processes than it, every tenant served', async () => {
    const rt = runtime({ maxProcesses: 3 });
    for (let tenant = 0; tenant < 7; tenant++) {
      const instance = await loadFor(rt, `tenant-${tenant}`, `module.exports = async () => ${tenant};`);
      expect((await invoke(instance)).value).toBe(tenant);
      expect(rt.processCount).toBeLessThanOrEqual(3);
    }
    await servesOtherTenant(rt);
  });

  it.each([
    [
      'in one loop',
      `for (let i = 0; i < 20000; i++) calls.push(req.svc.tokens.list({}).then(() => 'ok', (e) => (e.status === 429 ? e.name : 'other')));`,
    ],
    [
      'mixed methods, from timers',
      `await new Promise((resolve) => setTimeout(() => { for (let i = 0; i < 20000; i++) calls.push((i % 2 ? req.svc.tokenize({ i }) : req.svc.tokens.retrieve('t' + i)).then(() => 'ok', (e) => (e.status === 429 ? e.name : 'other'))); resolve(); }, 1));`,
    ],
  ])(
    '20,000 un-awaited req.svc calls %s: at most maxSvcInFlight reach the emulator at once, the rest are 429 SvcApiErrors',
    async (_name, storm) => {
      const rt = runtime();
      let inFlight = 0;
      let peak = 0;
      const svc = async () => {
        peak = Math.max(peak, ++inFlight);
        await sleep(5);
        inFlight--;
        return { data: [] };
      };
      const outcome = await value(
        rt,
        `module.exports = async (req) => { const calls = []; ${storm} const out = await Promise.all(calls);
        return { ok: out.filter((x) => x === 'ok').length, refused: out.filter((x) => x === 'SvcApiError').length }; };`,
        {},
        { svc, timeoutMs: 15_000 },
      );
      expect(peak).toBeLessThanOrEqual(100);
      expect(outcome).toEqual({ ok: 100, refused: 19_900 });
      await servesOtherTenant(rt);
    },
  );
});

describe('work a call starts outside its timers: it ends with the call (a review of the busy watch)', () => {
  const rt = sharedRuntime();

  // Each payload starts a chain (every step starts the next) and returns; a module-level counter says
  // whether the chain went on after the call was over. Before, the review's chains ran for ever.
  it.each([
    [
      'AbortSignal.timeout, each abort setting the next',
      `const tick = () => AbortSignal.timeout(5).addEventListener('abort', () => { steps++; tick(); }); tick();`,
    ],
    [
      'crypto.pbkdf2 on the thread pool, each callback starting the next',
      `const again = () => crypto.pbkdf2('x', 'y', 1000, 32, 'sha256', () => { steps++; again(); }); again();`,
    ],
    [
      'crypto.randomFill, each callback starting the next',
      `const again = () => crypto.randomFill(Buffer.alloc(64), () => { steps++; again(); }); again();`,
    ],
    [
      'crypto.randomFill with an argument after its callback (Node finds the callback all the same)',
      `const again = () => crypto.randomFill(Buffer.alloc(64), () => { steps++; again(); }, 0); again();`,
    ],
    [
      'crypto.sign with a callback',
      `const { privateKey } = crypto.generateKeyPairSync('ed25519');
    const again = () => crypto.sign(null, Buffer.from('x'), privateKey, () => { steps++; again(); }); again();`,
    ],
    [
      'crypto.subtle.digest, each promise starting the next',
      `const again = () => crypto.subtle.digest('SHA-256', new Uint8Array(64)).then(() => { steps++; again(); }); again();`,
    ],
    [
      'crypto.webcrypto.subtle.digest, each promise starting the next',
      `const again = () => crypto.webcrypto.subtle.digest('SHA-256', new Uint8Array(64)).then(() => { steps++; again(); }); again();`,
    ],
  ])('%s stops when the call returns', async (_name, chain) => {
    const instance = await load(
      rt(),
      `const crypto = require('crypto');
let steps = 0;
module.exports = async (req) => {
  if (req.args.start) {
    ${chain}
    // Until the chain has taken a step (the event, however long a loaded machine takes), then a little more.
    await new Promise((resolve) => { const wait = () => (steps > 0 ? setTimeout(resolve, 20) : setTimeout(wait, 5)); wait(); });
  }
  return steps;
};`,
    );
    try {
      // It runs while its call does...
      expect((await invoke(instance, { args: { start: true } })).value).toBeGreaterThan(0);
      // ...and at most a step in flight once the call is over: the count settles (however long a
      // loaded machine takes to finish that step), then stays.
      let after = -1;
      await expect
        .poll(
          async () => {
            const before = after;
            after = (await invoke(instance, { args: {} })).value as number;
            return after === before;
          },
          { timeout: 10_000, interval: 50 },
        )
        .toBe(true);
      await sleep(300);
      expect((await invoke(instance, { args: {} })).value).toBe(after);
    } finally {
      await rt().unload(instance.id);
    }
    await servesOtherTenant(rt());
  });

  it.each([
    ['crypto.pbkdf2', `crypto.pbkdf2('x', 'y', 2 ** 30, 64, 'sha512', () => {});`],
    [
      'crypto.subtle.deriveBits',
      `const key = await crypto.subtle.importKey('raw', Buffer.from('x'), 'PBKDF2', false, ['deriveBits']);
    crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-512', salt: Buffer.from('y'), iterations: 2 ** 30 }, key, 512);`,
    ],
  ])(
    'a process whose thread pool still works (%s) for a call that returned is replaced before the next call; a short job is not',
    async (_name, long) => {
      const rt = runtime();
      // A billion iterations: minutes of a core, long after the call.
      const instance = await load(
        rt,
        `const crypto = require('crypto');
module.exports = async (req) => {
  if (req.args.long) {
    ${long}
  }
  if (req.args.short) crypto.randomBytes(16, () => {});
  return 'ok';
};`,
      );
      const [pid] = sandboxPids(rt);
      expect((await invoke(instance, { args: { short: true } })).value).toBe('ok');
      await sleep(200);
      expect((await invoke(instance, { args: {} })).value).toBe('ok');
      expect(sandboxPids(rt)).toContain(pid);

      expect((await invoke(instance, { args: { long: true } })).value).toBe('ok');
      await sleep(200);
      expect((await invoke(instance, { args: {} })).value).toBe('ok');
      expect(sandboxPids(rt)).not.toContain(pid);
      await servesOtherTenant(rt);
    },
  );

  it('still serves each of them within a call, with Node’s answers', async () => {
    const result = await value(
      rt(),
      `const crypto = require('crypto');
module.exports = async () => {
  const reason = await new Promise((resolve) => AbortSignal.timeout(10).addEventListener('abort', (e) => resolve(e.target.reason)));
  const key = await new Promise((resolve, reject) => crypto.pbkdf2('x', 'y', 1, 8, 'sha256', (e, k) => (e ? reject(e) : resolve(k))));
  const digest = Buffer.from(await crypto.subtle.digest('SHA-256', Buffer.from('x'))).toString('hex').slice(0, 8);
  const random = await new Promise((resolve) => crypto.randomBytes(4, (e, b) => resolve(b.length)));
  let refused;
  try { AbortSignal.timeout(-1); } catch (e) { refused = e.name; }
  return { reason: reason.name, key: key.toString('hex'), digest, random, refused, uuid: crypto.webcrypto.randomUUID().length };
};`,
    );
    expect(result).toEqual({
      reason: 'TimeoutError',
      key: 'b8bb533887f4a58a',
      digest: '2d711642',
      random: 4,
      refused: 'RangeError',
      uuid: 36,
    });
  });
});

describe('what reaches user code of the host and of earlier calls (this, the Buffer pool, stacks, prototypes)', () => {
  const rt = sharedRuntime();

  it.each([
    ['an async function', `module.exports = async function () { return [this === undefined, typeof this]; };`],
    ['a plain function', `module.exports = function () { return [this === undefined, typeof this]; };`],
    [
      'a function reading this through a nested arrow',
      `module.exports = async function () { return (() => [this === undefined, typeof this])(); };`,
    ],
  ])('calls %s with `this` undefined', async (_name, code) => {
    expect(await value(rt(), code)).toEqual([true, 'undefined']);
    await servesOtherTenant(rt());
  });

  it('leaves nothing of one call in the Buffers the next call (another version) gets', async () => {
    const secret = 'card 4111111111111111 cvc 737';
    const writer = await loadFor(
      rt(),
      'pool',
      `module.exports = async (req) => { console.log(req.args.secret); const b = Buffer.from(req.args.secret); new TextEncoder().encode(req.args.secret);
        Buffer.from(req.args.secret, 'latin1'); return b.toString('hex').length; };`,
    );
    const reader = await loadFor(
      rt(),
      'pool',
      `module.exports = async (req) => {
        const secret = Buffer.from(req.args.needle);
        const views = [Buffer.from('x'), Buffer.allocUnsafe(16), Buffer.allocUnsafe(4096), Buffer.concat([Buffer.from('ab')]), Buffer.from('z'.repeat(100)), Buffer.allocUnsafeSlow(8192)];
        return { sizes: views.map((b) => b.buffer.byteLength), leaked: views.some((b) => Buffer.from(b.buffer).includes(secret)) };
      };`,
    );
    expect((await invoke(writer, { args: { secret } })).value).toBe(secret.length * 2);
    expect((await invoke(reader, { args: { needle: '4111111111111111' } })).value).toEqual({
      sizes: [1, 16, 4096, 2, 100, 8192],
      leaked: false,
    });
    await servesOtherTenant(rt());
  });

  it('shows no host path in any stack or message user code can read, nor in the stack the emulator logs', async () => {
    const result = await run(
      rt(),
      `module.exports = async function (req) {
        const stacks = [new Error('own').stack];
        const grab = (f) => { try { f(); } catch (e) { stacks.push(String(e && e.stack)); } };
        grab(() => require('crypto').createHash('no such digest'));
        grab(() => Buffer.alloc(-1));
        grab(() => JSON.parse('{'));
        grab(() => require('fs'));
        grab(() => new URL('no url'));
        grab(() => require('util').promisify(1));
        stacks.push(await new Promise((resolve) => setTimeout(() => { try { null.x; } catch (e) { resolve(e.stack); } }, 1)));
        stacks.push(await new Promise((resolve) => { const r = require('https').get('https://127.0.0.1:1/'); r.on('error', (e) => resolve(String(e.stack))); }));
        const holder = {};
        Error.captureStackTrace(holder);
        stacks.push(holder.stack, require('util').inspect(new Error('inspected')), String(new Error('x').stack));
        throw new Error(stacks.join('\\n--\\n'));
      };`,
    ).then(
      () => undefined,
      (error: unknown) => error as { detail: string; userStack?: string },
    );
    const text = `${result?.detail}\n${result?.userStack}`;
    expect(text).toContain(`${FILENAME}:`);
    expect(text).not.toMatch(/\/work\/|\/tmp\/|file:\/\/|\(node:|node:internal|node_modules\/ses|\/dist\//);
    await servesOtherTenant(rt());
  });

  /** A prototype user code could change (so change what the host or another version does with its instances). */
  const MUTABLE_CHAIN = `(o) => {
    const mutable = [];
    for (let p = Object.getPrototypeOf(o); p && p !== Object.prototype && p !== Function.prototype; p = Object.getPrototypeOf(p)) {
      const name = Object.prototype.hasOwnProperty.call(p, 'constructor') && typeof p.constructor === 'function' ? p.constructor.name : '?';
      if (Object.isExtensible(p)) { mutable.push(name + ' (extensible)'); continue; }
      for (const key of Reflect.ownKeys(p)) {
        const d = Object.getOwnPropertyDescriptor(p, key);
        if (d.configurable || (d.writable && (typeof d.value === 'function' || (typeof d.value === 'object' && d.value !== null)))) { mutable.push(name + '.' + String(key)); break; }
      }
    }
    return mutable;
  }`;

  it.each([
    ['a Timeout', `setTimeout(() => {}, 1)`],
    ['an Immediate', `setImmediate(() => {})`],
    ['an interval', `(() => { const t = setInterval(() => {}, 1000); clearInterval(t); return t; })()`],
    ['a DOMException (atob)', `(() => { try { atob('*'); } catch (e) { return e; } })()`],
    ['an abort reason', `AbortSignal.abort().reason`],
    ['a Node ERR_ error (Buffer.alloc(-1))', `(() => { try { Buffer.alloc(-1); } catch (e) { return e; } })()`],
    ['a crypto Hash (its stream classes)', `require('crypto').createHash('sha256')`],
    ['a PassThrough (EventEmitter)', `new (require('stream').PassThrough)()`],
    ['an AbortController and its signal', `new AbortController().signal`],
    ['a URL', `new URL('https://example.com/')`],
  ])('leaves no prototype of %s changeable', async (_name, expression) => {
    expect(await value(rt(), attempt(`return (${MUTABLE_CHAIN})(${expression});`))).toEqual({ value: [] });
    await servesOtherTenant(rt());
  });

  // An attack on an earlier version of this sandbox: freezeReachable freezes what it can reach from the modules and globals, plus the error
  // classes and handles provoked at boot. Node's classes reached only through an instance (a value
  // returned, an error thrown, a key made) stay mutable, and they are shared by every code version
  // of the tenant and by the host's own network stack (ExceptionWithHostPort is what a failed
  // connect throws). The next test shows what that is worth to an attacker.
  it.each([
    [
      'an AbortError (stream.addAbortSignal)',
      `await new Promise((resolve) => { const s = new (require('stream').PassThrough)(); s.on('error', resolve); require('stream').addAbortSignal(AbortSignal.abort(), s); })`,
    ],
    [
      'an ExceptionWithHostPort (what a failed connect throws)',
      `require('util')._exceptionWithHostPort(-111, 'connect', '127.0.0.1', 1)`,
    ],
    ['an ErrnoException', `require('util')._errnoException(-2, 'open')`],
    [
      'the https facade’s request',
      `(() => { const r = require('https').request('https://127.0.0.1:1/'); r.on('error', () => {}); r.destroy(); return r; })()`,
    ],
    ['a secret KeyObject', `require('crypto').createSecretKey(Buffer.alloc(16))`],
    ['a private KeyObject', `require('crypto').generateKeyPairSync('ed25519').privateKey`],
    ['a CryptoKey', `await require('crypto').subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, true, ['sign'])`],
    ['a ReadableStream (Blob.stream)', `new (require('buffer').Blob)(['x']).stream()`],
    ['a Duplex.from stream', `require('stream').Duplex.from(async function* () {})`],
    // (A PerformanceMark and an EventEmitterAsyncResource are no longer reachable: user code's
    // `performance` is a clock of its version's own, and EventEmitterAsyncResource is refused;
    // shared-process.test.ts.)
  ])('a prototype of %s that one owner’s code changes is never another owner’s', async (_name, expression) => {
    // Within one owner's process these stay changeable (only that owner's code runs there); what
    // must hold is that no other reactor, transform or tenant ever sees the change.
    const tamper = `module.exports = async () => {
      const o = await (async () => ${expression})();
      const tampered = [];
      for (let p = Object.getPrototypeOf(o); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
        try { Object.defineProperty(p, '__tampered', { value: true, configurable: true }); tampered.push(true); } catch {}
      }
      return tampered.length;
    };`;
    const look = `module.exports = async () => {
      const o = await (async () => ${expression})();
      for (let p = Object.getPrototypeOf(o); p; p = Object.getPrototypeOf(p)) if (Object.prototype.hasOwnProperty.call(p, '__tampered')) return 'tampered';
      return 'pristine';
    };`;
    const changer = await loadFor(rt(), 'owners', tamper);
    await invoke(changer);
    for (const tenant of ['owners', 'elsewhere']) {
      const other = await loadFor(rt(), tenant, look);
      expect((await invoke(other)).value).toBe('pristine');
    }
    await servesOtherTenant(rt());
  });

  // An attack on an earlier version of this sandbox (same class, its consequence): a tenant's code versions share one process, so one
  // reactor (or a compromised npm package inside it) patches those prototypes and reads what a
  // teammate's reactor sends: the headers and body of its outbound HTTPS requests (a PSP key, card
  // data), and the secret keys it exports.
  it('one code version cannot read another’s outbound request headers, bodies or exported keys by patching shared prototypes', async () => {
    const thief = await loadFor(
      rt(),
      'shared',
      `const stolen = [];
      module.exports = async function (req) {
        if (req.args.report) return stolen;
        const https = require('https');
        const probe = https.request('https://127.0.0.1:1/');
        probe.on('error', () => {});
        probe.destroy();
        const RequestProto = Object.getPrototypeOf(probe);
        const KeyProto = Object.getPrototypeOf(require('crypto').createSecretKey(Buffer.alloc(1)));
        const patch = (proto, name, spy) => { try { const original = proto[name]; proto[name] = function (...args) { spy(args, this); return original.apply(this, args); }; } catch {} };
        patch(RequestProto, 'setHeader', ([name, value]) => stolen.push('header ' + name + ': ' + value));
        patch(RequestProto, 'end', ([chunk]) => stolen.push('body ' + chunk));
        patch(KeyProto, 'export', (_args, key) => stolen.push('key ' + key.symmetricKeySize));
        return 'patched';
      };`,
    );
    const victim = await loadFor(
      rt(),
      'shared',
      `module.exports = async function (req) {
        const r = require('https').request('https://127.0.0.1:1/charge', { method: 'POST' });
        r.on('error', () => {});
        r.setHeader('authorization', 'Bearer psp-secret');
        r.end(JSON.stringify({ card: req.args.card }));
        return require('crypto').createSecretKey(Buffer.from('a secret of 24 bytes....')).export().length;
      };`,
    );
    await invoke(thief, { args: {} });
    expect((await invoke(victim, { args: { card: '4242424242424242' } })).value).toBe(24);
    expect((await invoke(thief, { args: { report: true } })).value).toEqual([]);
    await servesOtherTenant(rt());
  });
});

describe('beyond the list: the invocation record, timer handles, shared process state, limits', () => {
  const rt = sharedRuntime();

  // An attack on an earlier version of this sandbox: the host tags each call with an AsyncLocalStorage store, its mutable Invocation record
  // ({ id, vid, logBudget, svcInFlight, cancelled }). On Node 20 AsyncLocalStorage keeps the store
  // on every async resource as an own symbol property (Symbol(kResourceStore)): on each promise
  // and timer handle user code holds. Raising logBudget lifts the per-call console limit (the
  // emulator then keeps and prints every byte: 20 MB here, hundreds of MB within a timeout);
  // lowering svcInFlight lifts the in-flight req.svc cap; another call's record (see the timer
  // test) can be cancelled or have its id swapped to forge its log lines.
  it.each([
    ['a promise', 'Promise.resolve()'],
    ['a timer handle', '(() => { const t = setTimeout(() => {}, 1); clearTimeout(t); return t; })()'],
    ['an Immediate', '(() => { const t = setImmediate(() => {}); clearImmediate(t); return t; })()'],
  ])(
    'keeps the console budget and the req.svc cap of a call out of reach of its code (store found on %s)',
    async (_name, holder) => {
      let inFlight = 0;
      let peak = 0;
      const svc = async () => {
        peak = Math.max(peak, ++inFlight);
        await sleep(5);
        inFlight--;
        return null;
      };
      const result = await run(
        rt(),
        attempt(`const holder = ${holder};
        const key = Object.getOwnPropertySymbols(holder).find((s) => String(s) === 'Symbol(kResourceStore)');
        const record = key && holder[key];
        if (record && typeof record === 'object') { try { record.logBudget = Infinity; record.svcInFlight = -1e9; } catch {} }
        const line = 'x'.repeat(100000);
        for (let i = 0; i < 20; i++) console.log(line);
        const calls = [];
        for (let i = 0; i < 500; i++) calls.push(req.svc.tokenize({ i }).then(() => 'ok', (e) => (e.status === 429 ? e.name : 'other')));
        const out = await Promise.all(calls);
        return out.filter((x) => x === 'ok').length;`),
        {},
        { svc, timeoutMs: 10_000 },
      );
      const bytes = result.logs.reduce((sum, entry) => sum + Buffer.byteLength(entry.text), 0);
      expect(bytes).toBeLessThanOrEqual(64 * 1024 + 100);
      expect(peak).toBeLessThanOrEqual(100);
      expect(result.value).toEqual({ value: 100 });
      await servesOtherTenant(rt());
    },
  );

  // An attack on an earlier version of this sandbox: timer handles are Node's Timeout and Immediate objects with their internals: every
  // timer of the same duration sits in one linked list (`_idlePrev`/`_idleNext`), every Immediate in
  // one queue, each with its callback (`_onTimeout`), its arguments (`_timerArgs`/`_argv`) and its
  // call's record. So one call reads the arguments of another call's pending timer (here card
  // data, of another reactor of the tenant), replaces its callback and runs inside that call
  // (its logs, its result). It is also how Node's own TLSSocket is reached (see the https finding).
  it('one call cannot reach another call’s pending timers (their arguments, callbacks, records)', async () => {
    const victim = await loadFor(
      rt(),
      'timers',
      `module.exports = async function (req) {
        const got = await new Promise((resolve) => setTimeout((card) => resolve(card), 700, req.args.card));
        console.log('victim done');
        return got === req.args.card ? 'own data' : 'tampered: ' + got;
      };`,
    );
    const thief = await loadFor(
      rt(),
      'timers',
      `module.exports = async function () {
        const found = [];
        const mine = setTimeout(() => {}, 700);
        const immediate = setImmediate(() => {});
        for (const [start, step] of [[mine, '_idleNext'], [mine, '_idlePrev'], [immediate, '_idlePrev']]) {
          for (let t = start[step]; t && t !== start; t = t[step]) {
            if (typeof t._onTimeout !== 'function') continue;
            found.push(JSON.stringify(t._timerArgs));
            const original = t._onTimeout;
            t._onTimeout = function () { console.log('the thief runs inside the victim call'); return original.call(this, 'forged'); };
          }
        }
        clearTimeout(mine);
        clearImmediate(immediate);
        return found;
      };`,
    );
    const pending = invoke(victim, { args: { card: '4242424242424242' } }, { timeoutMs: 5000 });
    await sleep(200);
    expect((await invoke(thief)).value).toEqual([]);
    const result = await pending;
    expect(result.value).toBe('own data');
    expect(result.logs.map((entry) => entry.text)).toEqual(['victim done']);
    await servesOtherTenant(rt());
  });

  // An attack on an earlier version of this sandbox: process-wide state of Node stays writable through what freezeReachable leaves: setters of
  // accessors (util.inspect.defaultOptions, EventEmitter.defaultMaxListeners/captureRejections,
  // buffer.INSPECT_MAX_BYTES), state behind functions (stream.setDefaultHighWaterMark), and the
  // shared instances it does not freeze (performance, https.globalAgent, stream.promises,
  // generateKeyPair's promisify arguments). One code version so changes every other version of its
  // tenant: here it makes a teammate's promisified generateKeyPair hand back the private key as
  // `publicKey`, hijacks its stream.promises.pipeline and its https.globalAgent, and cuts its logs.
  it('one code version cannot change what Node does for another version of the tenant (process-wide state)', async () => {
    const victimCode = `module.exports = async function () {
      const { promisify, inspect } = require('util');
      const stream = require('stream');
      const EE = Object.getPrototypeOf(stream.Stream);
      const { publicKey } = await promisify(require('crypto').generateKeyPair)('ed25519', { publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
      console.log({ nested: { deep: 'abcdefgh' } });
      return {
        publishedKeyIsPublic: publicKey.includes('PUBLIC'),
        pipeline: await stream.promises.pipeline([]).then(() => 'ran', (e) => e.code),
        agentDestroy: String(require('https').globalAgent.destroy()),
        inspected: inspect({ a: { b: 'abcdefgh' } }),
        buffer: inspect(Buffer.from('abc')),
        maxListeners: EE.defaultMaxListeners,
        captureRejections: EE.captureRejections,
        highWaterMark: stream.getDefaultHighWaterMark(false),
        nowIsAClock: performance.now() > 0,
      };
    };`;
    const victim = await loadFor(rt(), 'state', victimCode);
    const before = await invoke(victim);
    const tamperer = await loadFor(
      rt(),
      'state',
      `module.exports = async function () {
        const done = [];
        const t = (name, f) => { try { f(); done.push(name); } catch {} };
        const stream = require('stream');
        const EE = Object.getPrototypeOf(stream.Stream);
        const gen = require('crypto').generateKeyPair;
        t('generateKeyPair', () => { const args = gen[Object.getOwnPropertySymbols(gen).find((s) => String(s).includes('customPromisifyArgs'))]; args[0] = 'privateKey'; args[1] = 'publicKey'; });
        t('pipeline', () => { stream.promises.pipeline = async () => 'hijacked'; });
        t('globalAgent', () => { require('https').globalAgent.destroy = () => 'hijacked'; });
        t('inspect', () => { require('util').inspect.defaultOptions = { depth: 0 }; });
        t('INSPECT_MAX_BYTES', () => { require('buffer').INSPECT_MAX_BYTES = 0; });
        t('defaultMaxListeners', () => { EE.defaultMaxListeners = 1; });
        t('captureRejections', () => { EE.captureRejections = true; });
        t('highWaterMark', () => { stream.setDefaultHighWaterMark(false, 1); });
        t('performance', () => { performance.now = () => 0; });
        return done;
      };`,
    );
    await invoke(tamperer);
    const after = await invoke(victim);
    expect(after.value).toEqual(before.value);
    expect(after.logs.map((entry) => entry.text)).toEqual(before.logs.map((entry) => entry.text));
    await servesOtherTenant(rt());
  });

  // An attack on an earlier version of this sandbox: the watch on work left running after a call returns is computed inside the sandbox
  // with `performance.now()` of the very `performance` object user code is handed (an unfrozen
  // instance). Pinning `performance.now` makes every idle report say "no wall time passed", so the
  // process spins for ever and keeps being given calls.
  it.each([
    ['assigned', 'performance.now = () => 0;'],
    ['defined', "Object.defineProperty(performance, 'now', { value: () => 1 });"],
  ])(
    'a busy loop left running between calls is stopped even with performance.now %s by user code',
    async (_name, pin) => {
      const rt = runtime();
      // Set by top-level code, the one place a timer outlives the call that set it.
      const spinner = await load(
        rt,
        `${pin} setInterval(() => { const end = Date.now() + 30; while (Date.now() < end); }, 1);\nmodule.exports = async () => 'returned';`,
      );
      expect((await invoke(spinner)).value).toBe('returned');
      const [pid] = sandboxPids(rt);
      await expect.poll(() => sandboxPids(rt).includes(pid!), { timeout: 15_000, interval: 100 }).toBe(false);
      await servesOtherTenant(rt);
    },
  );

  // An attack on an earlier version of this sandbox: maxResultBytes (the platform's 5 MB payload limit) is checked on returned values
  // only. A thrown CustomHttpResponseError carries its body, and a thrown Error its message and
  // stack, through to the emulator unbounded (up to the 16 MB frame), which builds the response,
  // the problem and the log line from them.
  it.each([
    [
      'a CustomHttpResponseError body',
      `throw new (require('@svc/errors').CustomHttpResponseError)({ status: 200, body: { data: 'x'.repeat(12e6) } });`,
    ],
    ['an Error message (and its stack)', `throw new Error('x'.repeat(7e6));`],
    [
      'custom response headers',
      `throw new (require('@svc/errors').CustomHttpResponseError)({ status: 200, headers: { big: 'h'.repeat(12e6) }, body: null });`,
    ],
  ])('bounds %s by the result limit', async (_name, body) => {
    const error = await rejection(run(rt(), `module.exports = async () => { ${body} };`, {}, { timeoutMs: 10_000 }));
    const size = (text: unknown) => Buffer.byteLength(JSON.stringify(text ?? null));
    expect(size(error.custom)).toBeLessThanOrEqual(5 * 1024 * 1024);
    expect(size(error.detail)).toBeLessThanOrEqual(5 * 1024 * 1024);
    expect(size(error.userStack)).toBeLessThanOrEqual(5 * 1024 * 1024);
    await servesOtherTenant(rt());
  });

  it.each([
    ['deep recursion', `const f = (n) => f(n + 1) + 1; f(0);`, /RangeError: Maximum call stack size exceeded/],
    [
      'console.log of a huge object',
      `const o = {}; for (let i = 0; i < 200000; i++) o['k' + i] = { i }; console.log(o); console.log(Array.from({ length: 1e6 }, (_, i) => i)); return 'logged';`,
      null,
    ],
  ])('held: %s stays within the call', async (_name, body, thrown) => {
    const outcome = await run(rt(), attempt(body), {}, { timeoutMs: 10_000 });
    if (thrown) expect((outcome.value as { threw: string }).threw).toMatch(thrown);
    else expect(outcome.value).toEqual({ value: 'logged' });
    expect(outcome.logs.reduce((sum, entry) => sum + Buffer.byteLength(entry.text), 0)).toBeLessThanOrEqual(
      64 * 1024 + 100,
    );
    await servesOtherTenant(rt());
  });

  it('held: a microtask loop that never yields is a 408, and the process is replaced', async () => {
    const error = await rejection(
      run(rt(), `module.exports = async () => { for (;;) await null; };`, {}, { timeoutMs: 1000 }),
    );
    expect(error.status).toBe(408);
    await servesOtherTenant(rt());
  });
});
