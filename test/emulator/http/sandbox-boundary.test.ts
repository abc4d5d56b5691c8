/**
 * The sandbox boundary as a client sees it: a real emulator with two tenants. Tenant A's reactor
 * attacks (memory, CPU, req.svc and console floods, sockets, the loopback admin route); tenant B
 * keeps being answered correctly (test/emulator/runtime/boundary.test.ts has the runtime-level
 * tests and what each attack did to earlier versions).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { EmulatorEvent } from '../../../src/emulator/index.js';
import { createTenant, sharedEmulator, unique, type HttpResult, type TestEmulator } from '../../helpers/emulator.js';
import { tempDir } from '../../helpers/temp.js';
import { CAPTURE_QUEUED, LISTEN_THROUGH_HANDLES, accepts, closingPort } from '../runtime/attack-kit.js';

const emu = sharedEmulator({ inMemory: true, syncTimeoutMs: 8000, runtime: { memoryMb: 64 } });

const B_CODE = `module.exports = async function (req) {
  return { raw: { doubled: req.args.n * 2, digest: require('crypto').createHash('sha256').update(String(req.args.n)).digest('hex').slice(0, 12) } };
};`;
const B_ANSWER = { doubled: 42, digest: '6f4b6612125f' };

interface Tenant {
  managementKey: string;
  privateKey: string;
}

let tenantB: Promise<Tenant & { reactor: string }> | undefined;

/** Tenant B (created once for the file) and its reactor. */
function b(): Promise<Tenant & { reactor: string }> {
  tenantB ??= (async () => {
    const created = await createTenant(emu(), 'tenant-b');
    const tenant = { managementKey: created.management_key, privateKey: created.private_key };
    return { ...tenant, reactor: await createReactor(tenant, B_CODE) };
  })();
  return tenantB;
}

/**
 * Tenant A, the attacker: a fresh tenant per test, so that what one attack leaves in A's process
 * (a core kept busy, say) is not the next test's problem.
 */
let attacker: Tenant | undefined;
function a(): Tenant {
  if (!attacker) throw new Error('call newAttacker() first');
  return attacker;
}
async function newAttacker(): Promise<Tenant> {
  const created = await createTenant(emu(), unique('tenant-a'));
  attacker = { managementKey: created.management_key, privateKey: created.private_key };
  return attacker;
}

async function createReactor(tenant: Tenant, code: string, application?: { id: string }): Promise<string> {
  const created = await emu().call('POST', '/reactors', {
    key: tenant.managementKey,
    body: { name: unique('reactor'), code, configuration: {}, ...(application && { application }) },
  });
  expect(created.status, created.text).toBe(201);
  return created.body.id as string;
}

function react(tenant: Tenant, reactor: string, args: Record<string, unknown> = {}): Promise<HttpResult> {
  return emu().call('POST', `/reactors/${reactor}/react`, { key: tenant.privateKey, body: { args } });
}

/** Tenant B's reactor answers correctly, `times` times. */
async function bIsServed(times = 1): Promise<void> {
  const tenant = await b();
  for (let i = 0; i < times; i++) {
    const result = await react(tenant, tenant.reactor, { n: 21 });
    expect(result.status, result.text).toBe(200);
    expect(result.body.raw).toEqual(B_ANSWER);
  }
}

function expectProblem(result: HttpResult, status: number, detail: RegExp): void {
  expect(result.status, result.text).toBe(status);
  expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(result.body.detail).toMatch(detail);
}

/** Console bytes the emulator reported for one reactor (by name). */
function consoleBytes(emulator: TestEmulator, reactorName: string): number {
  return emulator.events
    .filter(
      (event): event is Extract<EmulatorEvent, { type: 'console' }> =>
        event.type === 'console' && event.source === reactorName,
    )
    .reduce((sum, event) => sum + Buffer.byteLength(event.text), 0);
}

async function reactorName(tenant: Tenant, id: string): Promise<string> {
  const reactor = await emu().call('GET', `/reactors/${id}`, { key: tenant.managementKey });
  return reactor.body.name as string;
}

describe('tenant A attacks from its reactor, tenant B is served', () => {
  beforeEach(async () => {
    await newAttacker();
  });

  it("a memory bomb is A's own 500 problem; B is answered during and after", async () => {
    await bIsServed();
    const bomb = await createReactor(
      a(),
      `module.exports = async () => { globalThis.keep = new Array(30e6).fill(1.5); return { raw: 'survived' }; };`,
    );
    const tenant = await b();
    const [bombed, during] = await Promise.all([react(a(), bomb), react(tenant, tenant.reactor, { n: 21 })]);
    expectProblem(bombed, 500, /out of memory/i);
    expect(during.status, during.text).toBe(200);
    expect(during.body.raw).toEqual(B_ANSWER);
    await bIsServed(3);
  });

  it("work A leaves spinning after its reactor returns does not hold B, nor A's next call", async () => {
    const spinner = await createReactor(
      a(),
      `module.exports = async () => { setInterval(() => { const end = Date.now() + 40; while (Date.now() < end); }, 1); return { raw: 'returned' }; };`,
    );
    const first = await react(a(), spinner);
    expect(first.status, first.text).toBe(200);
    await bIsServed(5);
    const again = await react(a(), spinner);
    expect(again.status, again.text).toBe(200);
    expect(again.body.raw).toBe('returned');
  });

  it("A's flood of req.svc calls and console output is cut at A's limits; B is answered", async () => {
    const app = await emu().call('POST', '/applications', {
      key: a().managementKey,
      body: { name: unique('app'), type: 'private', permissions: ['token:read'] },
    });
    expect(app.status, app.text).toBe(201);
    const flood = await createReactor(
      a(),
      `module.exports = async function (req) {
        const line = 'x'.repeat(100000);
        for (let i = 0; i < 30; i++) console.log(line);
        const calls = [];
        for (let i = 0; i < 20000; i++) calls.push(req.svc.tokens.list({}).then(() => 'ok', (e) => (e.status === 429 ? e.name : 'other')));
        const out = await Promise.all(calls);
        return { raw: { ok: out.filter((x) => x === 'ok').length, refused: out.filter((x) => x === 'SvcApiError').length } };
      };`,
      { id: app.body.id as string },
    );
    const result = await react(a(), flood);
    expect(result.status, result.text).toBe(200);
    expect(result.body.raw).toEqual({ ok: 100, refused: 19_900 });
    expect(consoleBytes(emu(), await reactorName(a(), flood))).toBeLessThanOrEqual(64 * 1024 + 100);
    await bIsServed(3);
  });

  it('A cannot reach the loopback admin route (POST /_emulator/tenants) from its reactor', async () => {
    const closing = await closingPort();
    const port = Number(new URL(emu().url).port);
    const before = emu().events.filter(
      (event) => event.type === 'request' && event.path.startsWith('/_emulator/tenants'),
    ).length;
    const attacker = await createReactor(
      a(),
      `module.exports = async function (req) {
        ${CAPTURE_QUEUED}
        const attempts = [];
        attempts.push(await new Promise((resolve) => {
          const r = require('https').request({ hostname: '127.0.0.1', port: req.args.emulatorPort, path: '/_emulator/tenants', method: 'POST', rejectUnauthorized: false }, () => resolve('answered'));
          r.on('error', () => resolve('refused'));
          r.end('{}');
        }));
        try {
          const plain = Reflect.construct(NetSocket, [], TLSSocket);
          plain.connect(req.args.emulatorPort, '127.0.0.1');
          attempts.push('connected');
        } catch (e) { attempts.push(e.name); }
        return { raw: attempts };
      };`,
    );
    const result = await react(a(), attacker, { closingPort: closing, emulatorPort: port });
    expect(result.status, result.text).toBe(200);
    expect(result.body.raw[0]).toBe('refused');
    expect(['Error', 'TypeError']).toContain(result.body.raw[1]);
    expect(
      emu().events.filter((event) => event.type === 'request' && event.path.startsWith('/_emulator/tenants')).length,
    ).toBe(before);
    await bIsServed(2);
  });

  // An attack on an earlier version of this sandbox: the invocation record (AsyncLocalStorage store) is an own symbol property of every
  // promise: A lifts its console limit and the emulator keeps and reports all of A's output.
  it("A's reactor cannot lift its console limit; the emulator reports at most 64 KiB of A's output per call", async () => {
    const flood = await createReactor(
      a(),
      `module.exports = async function () {
        const holder = Promise.resolve();
        const key = Object.getOwnPropertySymbols(holder).find((s) => String(s) === 'Symbol(kResourceStore)');
        if (key && holder[key]) { try { holder[key].logBudget = Infinity; } catch {} }
        const line = 'x'.repeat(1000000);
        for (let i = 0; i < 20; i++) console.log(line);
        return { raw: 'flooded' };
      };`,
    );
    const result = await react(a(), flood);
    expect(result.status, result.text).toBe(200);
    expect(consoleBytes(emu(), await reactorName(a(), flood))).toBeLessThanOrEqual(64 * 1024 + 100);
    await bIsServed(2);
  });

  // An attack on an earlier version of this sandbox: Node's immediate queue hands A's code a TLSSocket, and with it native TCP and Pipe
  // handles that listen outside the patched Server.prototype.listen.
  it("A's reactor opens no listening port and makes no socket file", async () => {
    const closing = await closingPort();
    const dir = await tempDir('svc-boundary-http-');
    const file = path.join(dir, 'made-by-tenant-a.sock');
    const attacker = await createReactor(
      a(),
      `module.exports = async function (req) {
        ${CAPTURE_QUEUED}
        const out = {};
        ${LISTEN_THROUGH_HANDLES}
        return { raw: out };
      };`,
    );
    const result = await react(a(), attacker, { closingPort: closing, path: file });
    expect(result.status, result.text).toBe(200);
    const port = result.body.raw.port as number | undefined;
    expect(port === undefined ? false : await accepts(port)).toBe(false);
    expect(existsSync(file)).toBe(false);
    await bIsServed(2);
  });
});
