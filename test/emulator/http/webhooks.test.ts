import { readdir, readFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Ajv } from 'ajv';
import formats from 'ajv-formats';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { reactorResultSchema } from '../../../src/api/schemas.js';
import type { Reactor } from '../../../src/api/types.js';
import type { EmulatorEvent, EmulatorOptions } from '../../../src/emulator/index.js';
import type { ReactorResultRecord } from '../../../src/emulator/store/records.js';
import { Store } from '../../../src/emulator/store/store.js';
import { verifySignature } from '../../../src/emulator/services/webhooks.js';
import {
  createTenant,
  sharedEmulator,
  startEmulator,
  unique,
  type HttpResult,
  type TestEmulator,
} from '../../helpers/emulator.js';
import { startReceiver, type Delivery } from '../../helpers/receiver.js';
import { eventually, sleep } from '../../helpers/wait.js';

/** Deliveries retry with backoff: their checks get longer than the usual five seconds. */
const DELIVERY_MS = 8000;

const WEBHOOKS = { attempts: 3, retryBaseMs: 50, attemptTimeoutMs: 500 };
const OPTIONS: EmulatorOptions = { inMemory: true, webhooks: WEBHOOKS };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const CODE = `module.exports = async function (req) {
  const { delay = 0, msg = 'hi' } = req.args;
  if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
  return { raw: { echoed: msg } };
};
`;

async function createReactor(emu: TestEmulator): Promise<Reactor> {
  const created = await emu.call<Reactor>('POST', '/reactors', {
    body: { name: unique('hooks'), code: CODE, configuration: {} },
  });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

async function invokeAsync(
  emu: TestEmulator,
  reactor: Reactor,
  callbackUrl: string,
  args: Record<string, unknown> = {},
  key = emu.privateKey,
): Promise<string> {
  const accepted = await emu.call('POST', `/reactors/${reactor.id}/react`, {
    key,
    body: { args, callback_url: callbackUrl },
  });
  expect(accepted.status, accepted.text).toBe(202);
  return accepted.body.id as string;
}

function getResult(emu: TestEmulator, reactor: Reactor, requestId: string, key = emu.privateKey): Promise<HttpResult> {
  return emu.call('GET', `/reactors/${reactor.id}/results/${requestId}`, { key });
}

/** Waits until the result's delivery has ended (delivered or failed) and returns the result. */
function delivered(emu: TestEmulator, reactor: Reactor, requestId: string, key = emu.privateKey): Promise<HttpResult> {
  return eventually(async () => {
    const result = await getResult(emu, reactor, requestId, key);
    expect(result.status, result.text).toBe(200);
    expect(result.body.delivery.status).not.toBe('pending');
    return result;
  }, DELIVERY_MS);
}

function webhookEvents(emu: TestEmulator, requestId: string) {
  return emu.events.filter(
    (event): event is Extract<EmulatorEvent, { type: 'webhook' }> =>
      event.type === 'webhook' && event.requestId === requestId,
  );
}

const validResult = (() => {
  const ajv = new Ajv({ strict: true, allErrors: true });
  formats.default(ajv);
  return ajv.compile(reactorResultSchema);
})();

function expectSigned(emu: TestEmulator, delivery: Delivery): void {
  expect(verifySignature(emu.started.webhookSecret, delivery.body, delivery.headers['svc-signature'] as string)).toBe(
    true,
  );
}

describe('the result shows the delivery apart from the execution', () => {
  const emu = sharedEmulator(OPTIONS);
  let reactor: Reactor;
  beforeAll(async () => {
    reactor = await createReactor(emu());
  });

  it('pending while the code runs, then delivered after one attempt with the receiver’s status', async () => {
    const hook = await startReceiver();
    const requestId = await invokeAsync(emu(), reactor, hook.url, { delay: 800, msg: 'slow' });
    const pending = await getResult(emu(), reactor, requestId);
    expect(pending.body).toEqual({
      id: requestId,
      reactor_id: reactor.id,
      status: 'pending',
      started_at: expect.any(String),
      delivery: { status: 'pending', attempts: 0, last_status: null, event_id: expect.stringMatching(UUID) },
    });
    expect(validResult(pending.body), JSON.stringify(validResult.errors)).toBe(true);

    const [delivery] = await hook.waitFor(1);
    const done = await delivered(emu(), reactor, requestId);
    expect(done.body).toEqual({
      ...JSON.parse(delivery!.body),
      delivery: { status: 'delivered', attempts: 1, last_status: 200, event_id: pending.body.delivery.event_id },
    });
    expect(done.body.status).toBe('completed');
    expect(validResult(done.body), JSON.stringify(validResult.errors)).toBe(true);
    // The webhook body is the event, without the delivery (which changes from attempt to attempt).
    expect(JSON.parse(delivery!.body)).not.toHaveProperty('delivery');
  });

  it('after every attempt failed the execution is completed and the delivery failed, with the last status', async () => {
    const hook = await startReceiver(() => 500);
    const requestId = await invokeAsync(emu(), reactor, hook.url, { msg: 'nobody home' });
    const done = await delivered(emu(), reactor, requestId);
    expect(done.body).toMatchObject({
      status: 'completed',
      raw: { echoed: 'nobody home' },
      delivery: { status: 'failed', attempts: WEBHOOKS.attempts, last_status: 500 },
    });
    expect(hook.received).toHaveLength(WEBHOOKS.attempts);
    expect(webhookEvents(emu(), requestId).map(({ attempt, status, ok }) => ({ attempt, status, ok }))).toEqual([
      { attempt: 1, status: 500, ok: false },
      { attempt: 2, status: 500, ok: false },
      { attempt: 3, status: 500, ok: false },
    ]);
    // Bounded: no attempt after the last.
    await sleep(WEBHOOKS.retryBaseMs * 2 ** WEBHOOKS.attempts);
    expect(hook.received).toHaveLength(WEBHOOKS.attempts);
  });

  it('a receiver that cannot be reached: failed, last_status null and the reason', async () => {
    const hook = await startReceiver(() => 'hang');
    const requestId = await invokeAsync(emu(), reactor, hook.url);
    const done = await delivered(emu(), reactor, requestId);
    expect(done.body.delivery).toEqual({
      status: 'failed',
      attempts: WEBHOOKS.attempts,
      last_status: null,
      last_error: `no answer within ${WEBHOOKS.attemptTimeoutMs} ms`,
      event_id: expect.stringMatching(UUID),
    });
    expect(validResult(done.body), JSON.stringify(validResult.errors)).toBe(true);
  });

  it('every attempt of one event carries the same SVC-WEBHOOK-ID and the same signed bytes; another event has another id', async () => {
    const hook = await startReceiver((n) => (n <= 2 ? 503 : 200));
    const requestId = await invokeAsync(emu(), reactor, hook.url, { msg: 'again' });
    const deliveries = await hook.waitFor(3);
    const done = await delivered(emu(), reactor, requestId);
    expect(done.body.delivery).toEqual({
      status: 'delivered',
      attempts: 3,
      last_status: 200,
      event_id: expect.stringMatching(UUID),
    });
    const ids = deliveries.map((delivery) => delivery.headers['svc-webhook-id']);
    expect(ids).toEqual([done.body.delivery.event_id, done.body.delivery.event_id, done.body.delivery.event_id]);
    expect(new Set(deliveries.map((delivery) => delivery.body)).size).toBe(1);
    for (const delivery of deliveries) expectSigned(emu(), delivery);

    const other = await startReceiver();
    const otherId = await invokeAsync(emu(), reactor, other.url);
    const [otherDelivery] = await other.waitFor(1);
    expect(otherDelivery!.headers['svc-webhook-id']).toEqual(expect.stringMatching(UUID));
    expect(otherDelivery!.headers['svc-webhook-id']).not.toBe(done.body.delivery.event_id);
    expect((await delivered(emu(), reactor, otherId)).body.delivery.event_id).toBe(
      otherDelivery!.headers['svc-webhook-id'],
    );
  });

  it('410 Gone stops the retries: one attempt, delivery failed', async () => {
    const hook = await startReceiver(() => 410);
    const requestId = await invokeAsync(emu(), reactor, hook.url);
    const done = await delivered(emu(), reactor, requestId);
    expect(done.body.delivery).toMatchObject({ status: 'failed', attempts: 1, last_status: 410 });
    await sleep(WEBHOOKS.retryBaseMs * 4);
    expect(hook.received).toHaveLength(1);
  });

  it('does not follow a redirect: a 3xx is a failed attempt and the other address hears nothing', async () => {
    const elsewhere = await startReceiver();
    const hook = await startReceiver(() => ({ status: 307, headers: { location: elsewhere.url } }));
    const requestId = await invokeAsync(emu(), reactor, hook.url);
    const done = await delivered(emu(), reactor, requestId);
    expect(done.body.delivery).toMatchObject({ status: 'failed', attempts: WEBHOOKS.attempts, last_status: 307 });
    expect(hook.received).toHaveLength(WEBHOOKS.attempts);
    expect(elsewhere.received).toHaveLength(0);
  });

  it('reads a small part of a huge answer and drops the connection', async () => {
    const GiB = 1024 ** 3;
    let written = 0;
    let closed = false;
    const hook = await startReceiver(() => (response) => {
      const chunk = Buffer.alloc(64 * 1024, 'x');
      response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(GiB) });
      response.on('close', () => (closed = true));
      // Written as fast as the emulator reads (backpressure), so `written` is what it took in.
      const pump = () => {
        while (!closed && written < GiB) {
          written += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
        if (written >= GiB) response.end();
      };
      pump();
    });
    const requestId = await invokeAsync(emu(), reactor, hook.url);
    const done = await delivered(emu(), reactor, requestId);
    expect(done.body.delivery).toMatchObject({ status: 'delivered', attempts: 1, last_status: 200 });
    await eventually(() => expect(closed).toBe(true), DELIVERY_MS);
    // Socket buffers hold a few MB at most; the answer is 1 GiB.
    expect(written).toBeLessThan(32 * 1024 * 1024);
  });

  it('times an attempt out even when garbage is collected while it waits', async () => {
    // A timeout signal only undici holds may be collected before it fires (Node 20): an attempt
    // then waits for ever. The garbage collector is run often here to make it happen if it can.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const collector = setInterval(gc, 10);
    onTestFinished(() => clearInterval(collector));
    const hook = await startReceiver(() => 'hang');
    const requestId = await invokeAsync(emu(), reactor, hook.url);
    const done = await delivered(emu(), reactor, requestId);
    expect(done.body.delivery).toMatchObject({
      status: 'failed',
      attempts: WEBHOOKS.attempts,
      last_error: `no answer within ${WEBHOOKS.attemptTimeoutMs} ms`,
    });
  });

  it('cuts off an answer that never ends at the attempt timeout', async () => {
    let closed = false;
    const hook = await startReceiver(() => (response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write('still writing');
      response.on('close', () => (closed = true));
    });
    const requestId = await invokeAsync(emu(), reactor, hook.url);
    const done = await delivered(emu(), reactor, requestId);
    expect(done.body.delivery).toMatchObject({ status: 'delivered', attempts: 1, last_status: 200 });
    await eventually(() => expect(closed).toBe(true), DELIVERY_MS);
  });
});

describe('retention of asynchronous results', () => {
  it('keeps a result while it runs or is delivered, and drops it retentionMs after, from the API and the store', async () => {
    const emu = await startEmulator({ webhooks: WEBHOOKS, results: { retentionMs: 300 } });
    const reactor = await createReactor(emu);
    const hook = await startReceiver();
    const requestId = await invokeAsync(emu, reactor, hook.url, { delay: 1000, msg: 'kept' });
    // Older than the retention while it runs: still there.
    await sleep(600);
    expect((await getResult(emu, reactor, requestId)).body).toMatchObject({
      status: 'pending',
      delivery: { status: 'pending' },
    });
    await hook.waitFor(1);
    const gone = await eventually(async () => {
      const result = await getResult(emu, reactor, requestId);
      expect(result.status).toBe(404);
      return result;
    }, DELIVERY_MS);
    expect(gone.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(gone.body.detail).toMatch(/results are kept 0.3 s after their delivery ends/);
    // The sweep removes it from the files as well.
    const folder = path.join(path.dirname(emu.data!), 'data', 'reactor-results');
    await eventually(async () => {
      for (const file of await readdir(folder))
        expect(await readFile(path.join(folder, file), 'utf8')).not.toContain(requestId);
    }, DELIVERY_MS);
  });

  it('keeps at most maxPerTenant results per tenant, dropping the oldest finished first', async () => {
    const emu = await startEmulator({ inMemory: true, webhooks: WEBHOOKS, results: { maxPerTenant: 2 } });
    const reactor = await createReactor(emu);
    const hook = await startReceiver();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(await invokeAsync(emu, reactor, hook.url, { msg: `n${i}` }));
      await delivered(emu, reactor, ids[i]!);
    }
    const [first, second, third] = ids as [string, string, string];
    expect((await getResult(emu, reactor, first)).status).toBe(404);
    expect((await getResult(emu, reactor, second)).status).toBe(200);
    expect((await getResult(emu, reactor, third)).status).toBe(200);

    // A result still running is never dropped, even when it is the oldest.
    const running = await invokeAsync(emu, reactor, hook.url, { delay: 1500, msg: 'running' });
    const later = await invokeAsync(emu, reactor, hook.url, { msg: 'later' });
    await delivered(emu, reactor, later);
    expect((await getResult(emu, reactor, running)).body.status).toBe('pending');
    expect((await delivered(emu, reactor, running)).body.raw).toEqual({ echoed: 'running' });

    // The cap is per tenant: another tenant's results do not count against this one's.
    const other = await createTenant(emu);
    const theirs = await emu.call<Reactor>('POST', '/reactors', {
      key: other.management_key,
      body: { name: 'theirs', code: CODE, configuration: {} },
    });
    const theirId = await invokeAsync(emu, theirs.body, hook.url, {}, other.private_key);
    await delivered(emu, theirs.body, theirId, other.private_key);
    expect((await getResult(emu, reactor, later)).status).toBe(200);
  });
});

describe('results stored by an earlier svc (a list of attempts, no delivery)', () => {
  it('reads them with a delivery made from their attempts, and delivers one that never was', async () => {
    const managementKey = 'legacy-results-management-key-01';
    const first = await startEmulator({ managementKey, webhooks: WEBHOOKS });
    const reactor = await createReactor(first);
    const hook = await startReceiver();
    const deliveredId = await invokeAsync(first, reactor, hook.url, { msg: 'old' });
    await delivered(first, reactor, deliveredId);
    const { dir, data, privateKey } = first;
    await first.dispose();

    // Rewritten as the earlier svc stored them: one delivered, one cut off before it ran to the end.
    type Legacy = Omit<ReactorResultRecord, 'delivery'> & {
      deliveries: { attempt: number; status?: number; ok: boolean; at: string }[];
    };
    const store = await Store.open({ path: data! });
    const { delivery: _delivered, ...done } = store.results.get(first.tenantId, deliveredId)!;
    const at = new Date().toISOString();
    const legacyDone: Legacy = {
      ...done,
      deliveries: [
        { attempt: 1, status: 500, ok: false, at },
        { attempt: 2, status: 204, ok: true, at },
      ],
    };
    const cutOffId = '00000000-0000-4000-8000-00000000c0ff';
    const legacyCutOff: Legacy = { ...done, id: cutOffId, status: 'pending', deliveries: [] };
    delete legacyCutOff.outcome;
    delete legacyCutOff.completed_at;
    await store.results.put(legacyDone as unknown as ReactorResultRecord);
    await store.results.put(legacyCutOff as unknown as ReactorResultRecord);
    await store.close();

    const second = await startEmulator({ dir, managementKey, webhooks: WEBHOOKS });
    const old = await getResult(second, reactor, deliveredId, privateKey);
    expect(old.body).toMatchObject({
      status: 'completed',
      raw: { echoed: 'old' },
      delivery: { status: 'delivered', attempts: 2, last_status: 204 },
    });
    expect(validResult(old.body), JSON.stringify(validResult.errors)).toBe(true);
    const [, cutOff] = await hook.waitFor(2);
    expect(JSON.parse(cutOff!.body)).toMatchObject({ id: cutOffId, status: 'failed', error: { title: 'Interrupted' } });
    expect((await delivered(second, reactor, cutOffId, privateKey)).body.delivery).toMatchObject({
      status: 'delivered',
      attempts: 1,
      event_id: cutOff!.headers['svc-webhook-id'],
    });
  });
});

describe('webhook sockets are bounded', () => {
  it('holds at most maxConcurrent attempts at once, maxConcurrentPerTenant of one tenant; the rest wait, retried in turn, none lost', async () => {
    const emu = await startEmulator({
      inMemory: true,
      webhooks: { attempts: 3, retryBaseMs: 20, attemptTimeoutMs: 8000, maxConcurrent: 3, maxConcurrentPerTenant: 2 },
    });
    // A receiver that holds every request until told, counting its sockets and the requests it holds.
    const held: { tenant: string; id: string; response: ServerResponse }[] = [];
    const holding = { now: { a: 0, b: 0 }, peak: { a: 0, b: 0, all: 0 } };
    const tries = new Map<string, number>();
    let answering = false;
    let sockets = 0;
    const answer = (tenant: string, id: string, response: ServerResponse) => {
      holding.now[tenant as 'a' | 'b']--;
      const n = (tries.get(id) ?? 0) + 1;
      tries.set(id, n);
      // Tenant a's first attempt of each event fails: its retry waits its turn like any attempt.
      response.writeHead(tenant === 'a' && n === 1 ? 503 : 200).end();
    };
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        const tenant = request.url === '/a' ? 'a' : 'b';
        const id = String(request.headers['svc-webhook-id']);
        holding.now[tenant]++;
        holding.peak[tenant] = Math.max(holding.peak[tenant], holding.now[tenant]);
        holding.peak.all = Math.max(holding.peak.all, holding.now.a + holding.now.b);
        if (answering) answer(tenant, id, response);
        else held.push({ tenant, id, response });
      });
    });
    server.on('connection', (socket) => {
      sockets++;
      socket.once('close', () => sockets--);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTestFinished(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const other = await createTenant(emu);
    const mine = await createReactor(emu);
    const theirs = await emu.call<Reactor>('POST', '/reactors', {
      key: other.management_key,
      body: { name: unique('hooks'), code: CODE, configuration: {} },
    });
    const calls = [
      ...(await Promise.all(Array.from({ length: 5 }, () => invokeAsync(emu, mine, `${base}/a`)))).map((id) => ({
        reactor: mine,
        id,
        key: emu.privateKey,
      })),
      ...(
        await Promise.all(
          Array.from({ length: 2 }, () => invokeAsync(emu, theirs.body, `${base}/b`, {}, other.private_key)),
        )
      ).map((id) => ({ reactor: theirs.body, id, key: other.private_key })),
    ];

    // Three held, none of a tenant beyond its share of two: whichever tenant's runs end first (a
    // busy machine decides), the other's deliveries are not held back by its waiting ones.
    await eventually(() => expect(held).toHaveLength(3), DELIVERY_MS);
    await eventually(() => expect(sockets).toBe(3), DELIVERY_MS);
    const ofA = held.filter((entry) => entry.tenant === 'a').length;
    expect([1, 2]).toContain(ofA);
    expect([1, 2]).toContain(held.length - ofA);

    answering = true;
    for (const { tenant, id, response } of held.splice(0)) answer(tenant, id, response);
    for (const call of calls) {
      const done = await delivered(emu, call.reactor, call.id, call.key);
      expect(done.body.delivery).toMatchObject({
        status: 'delivered',
        attempts: call.key === emu.privateKey ? 2 : 1,
        last_status: 200,
      });
    }
    expect(holding.peak.all).toBeLessThanOrEqual(3);
    expect(holding.peak.a).toBeLessThanOrEqual(2);
    expect(holding.peak.b).toBeLessThanOrEqual(2);
    // Every event reached the receiver: a's twice (the failed attempt, then its retry), b's once.
    expect([...tries.values()].sort()).toEqual([1, 1, 2, 2, 2, 2, 2]);
  });
});
