import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmulatorError } from '../../src/emulator/index.js';
import { durationMs } from '../../src/testing/clock.js';
import { startSvc, type Svc, type SvcTenant } from '../../src/testing/index.js';

const PROJECT = fileURLToPath(new URL('./clock-fixture/', import.meta.url));
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Generous: how far two reads of one clock may be apart in these tests (a loaded machine). */
const SLACK = 60_000;

interface Now {
  now: number;
  date: string;
  text: string;
  later: number;
  isDate: boolean;
  epoch: string;
  parsed: number;
  assign: string;
  viaPrototype: unknown;
}

/** A call of the tenant's API with its private key (or `key`), its answer's status and JSON. */
async function call(
  t: SvcTenant,
  method: string,
  path: string,
  body?: unknown,
  key = t.keys.private,
): Promise<{ status: number; body: any }> {
  const response = await fetch(t.url + path, {
    method,
    headers: { 'svc-api-key': key, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

async function reactorNow(t: SvcTenant): Promise<Now> {
  const result = await t.reactors.invoke('now');
  expect(result.status).toBe(200);
  return (result.body as { raw: Now }).raw;
}

describe('svc/testing: a clock per tenant', () => {
  let svc: Svc;

  beforeAll(async () => {
    svc = await startSvc({
      config: {
        applications: { backend: { type: 'private', permissions: ['token:create', 'token:read'] } },
        reactors: { now: { code: 'reactors/now.js' }, noop: { code: 'reactors/noop.js' } },
        proxies: { stamped: { destination_url: 'https://api.example.com', request_transform: 'transforms/stamp.js' } },
      },
      projectDir: PROJECT,
    });
  });

  afterAll(async () => {
    await svc?.stop();
  });

  it('expires a token of 1 day after advance(25h), in that tenant only', async () => {
    const [t, other] = await Promise.all([svc.tenant(), svc.tenant()]);
    const expiresAt = new Date(Date.now() + DAY).toISOString();
    const made = await Promise.all(
      [t, other].map((tenant) =>
        call(tenant, 'POST', '/tokens', { type: 'token', data: 'secret', expires_at: expiresAt }),
      ),
    );
    for (const answer of made) expect(answer.status).toBe(201);
    const [mine, theirs] = made.map((answer) => answer.body.id as string);
    await t.clock.advance('25h');
    expect(t.clock.now().getTime()).toBeGreaterThan(Date.parse(expiresAt));
    expect((await call(t, 'GET', `/tokens/${mine}`)).status).toBe(404);
    expect((await call(other, 'GET', `/tokens/${theirs}`)).status).toBe(200);
    // A token made after the move expires on the moved clock: "1 day ahead" is a day after the tenant's now.
    const past = await call(t, 'POST', '/tokens', { type: 'token', data: 'x', expires_at: expiresAt });
    expect(past.status).toBe(400);
    expect(past.body.errors.expires_at[0]).toContain('future');
    await Promise.all([t.dispose(), other.dispose()]);
  });

  it("ends an Application's key at its expires_at on the tenant's clock", async () => {
    const t = await svc.tenant();
    const created = await call(
      t,
      'POST',
      '/applications',
      {
        name: 'short-lived',
        type: 'private',
        permissions: ['token:read'],
        expires_at: new Date(Date.now() + DAY).toISOString(),
      },
      t.keys.management,
    );
    expect(created.status).toBe(201);
    const key = created.body.key as string;
    expect((await call(t, 'GET', '/tokens', undefined, key)).status).toBe(200);
    await t.clock.advance('2d');
    expect((await call(t, 'GET', '/tokens', undefined, key)).status).toBe(401);
    expect((await call(t, 'GET', `/applications/${created.body.id}`, undefined, t.keys.management)).status).toBe(404);
    await t.dispose();
  });

  it('expires an open transaction once its hour has passed on the clock', async () => {
    const t = await svc.tenant();
    const begun = await call(t, 'POST', '/transactions');
    expect(begun.status).toBe(201);
    expect((await call(t, 'GET', `/transactions/${begun.body.id}`)).body.status).toBe('open');
    await t.clock.advance('61m');
    expect((await call(t, 'GET', `/transactions/${begun.body.id}`)).body.status).toBe('expired');
    await t.dispose();
  });

  it('drops an asynchronous result once its retention has passed', async () => {
    const t = await svc.tenant();
    const callbackUrl = await t.webhooks.receiver();
    const started = await t.reactors.invoke('noop', {}, { callbackUrl });
    expect(started.status).toBe(202);
    await t.settle();
    const reactorId = (await t.client.reactors.all()).find((reactor) => reactor.name === 'noop')!.id;
    const path = `/reactors/${reactorId}/results/${(started.body as { id: string }).id}`;
    expect((await call(t, 'GET', path)).status).toBe(200);
    await t.clock.advance('23h');
    expect((await call(t, 'GET', path)).status).toBe(200);
    await t.clock.advance('2h');
    expect((await call(t, 'GET', path)).status).toBe(404);
    await t.dispose();
  });

  it("delivers a failing webhook's retries in order when the clock advances, without waiting for them", async () => {
    const t = await svc.tenant();
    let attempts = 0;
    // The first two attempts fail: the retries are due 1 s and 3 s after the first, on the tenant's clock.
    const callbackUrl = await t.webhooks.receiver(() => (++attempts <= 2 ? 500 : 200));
    const before = t.clock.now().getTime();
    const started = await t.reactors.invoke('noop', {}, { callbackUrl });
    expect(started.status).toBe(202);
    await t.clock.advance('1m');
    // Resolved once they ran: all three attempts are in, in order, one delivery.
    expect(attempts).toBe(3);
    const received = t.webhooks.received();
    expect(received).toHaveLength(3);
    expect(new Set(received.map((delivery) => delivery.id)).size).toBe(1);
    for (const delivery of received) expect(delivery.body).toMatchObject({ status: 'completed' });
    await t.settle();
    const reactorId = (await t.client.reactors.all()).find((reactor) => reactor.name === 'noop')!.id;
    const result = await call(t, 'GET', `/reactors/${reactorId}/results/${(started.body as { id: string }).id}`);
    expect(result.body.delivery).toMatchObject({ status: 'delivered', attempts: 3, last_status: 200 });
    expect(t.clock.now().getTime()).toBeGreaterThanOrEqual(before + 60_000);
    await t.dispose();
  });

  it("gives reactor code the tenant's time: Date.now(), new Date(), Date() and its timers", async () => {
    const [t, other] = await Promise.all([svc.tenant(), svc.tenant()]);
    const real = await reactorNow(t);
    expect(Math.abs(real.now - Date.now())).toBeLessThan(SLACK);
    await t.clock.advance('2d');
    const moved = await reactorNow(t);
    const expected = Date.now() + 2 * DAY;
    expect(Math.abs(moved.now - expected)).toBeLessThan(SLACK);
    expect(Math.abs(Date.parse(moved.date) - expected)).toBeLessThan(SLACK);
    expect(Math.abs(Date.parse(moved.text) - expected)).toBeLessThan(SLACK);
    expect(Math.abs(moved.later - expected)).toBeLessThan(SLACK);
    expect(Math.abs(moved.now - t.clock.now().getTime())).toBeLessThan(SLACK);
    // The rest of Date as it was; the code cannot change its Date nor reach the host's through it.
    expect(moved).toMatchObject({
      isDate: true,
      epoch: '1970-01-01T00:00:00.000Z',
      parsed: Date.parse('2030-01-01T00:00:00Z'),
      assign: 'refused',
    });
    if (typeof moved.viaPrototype === 'number') expect(Math.abs(moved.viaPrototype - Date.now())).toBeGreaterThan(DAY);
    // Another fork of the same template, in the same sandbox process, reads real time.
    const theirs = await reactorNow(other);
    expect(Math.abs(theirs.now - Date.now())).toBeLessThan(SLACK);
    // The test process's own clock is untouched.
    expect(Math.abs(Date.now() - (performance.timeOrigin + performance.now()))).toBeLessThan(SLACK);
    await Promise.all([t.dispose(), other.dispose()]);
  });

  it("gives a proxy's transform the tenant's time", async () => {
    const t = await svc.tenant();
    t.destinations.intercept('https://api.example.com').on('POST', '/v1/charges').times(2).reply(200, { ok: true });
    const stampOf = async () => {
      const result = await t.proxies.invoke('stamped', { method: 'POST', path: '/v1/charges', body: { amount: 1 } });
      expect(result.status).toBe(200);
      return Number(t.destinations.calls().at(-1)!.headers['x-now']);
    };
    expect(Math.abs((await stampOf()) - Date.now())).toBeLessThan(SLACK);
    await t.clock.advance('30d');
    expect(Math.abs((await stampOf()) - (Date.now() + 30 * DAY))).toBeLessThan(SLACK);
    await t.dispose();
  });

  it('sets the clock to a date the code then reads, and refuses to go back', async () => {
    const t = await svc.tenant();
    await t.clock.set('2030-06-01T12:00:00Z');
    const at = Date.parse('2030-06-01T12:00:00Z');
    expect(t.clock.now().getTime() - at).toBeLessThan(SLACK);
    const read = await reactorNow(t);
    expect(read.now).toBeGreaterThanOrEqual(at);
    expect(read.now - at).toBeLessThan(SLACK);
    expect(read.date.startsWith('2030-06-01T12:0')).toBe(true);
    await t.clock.set(new Date(at + HOUR));
    expect(t.clock.now().getTime()).toBeGreaterThanOrEqual(at + HOUR);
    await expect(t.clock.set('2029-01-01T00:00:00Z')).rejects.toThrow(/cannot go back/);
    await expect(t.clock.set('someday')).rejects.toThrow(EmulatorError);
    await t.dispose();
  });

  it('refuses a duration it cannot read, with what it takes', async () => {
    const t = await svc.tenant();
    await expect(t.clock.advance('soon')).rejects.toThrow(/takes a duration such as '25h'/);
    await expect(t.clock.advance(-5)).rejects.toThrow(/takes a duration/);
    await expect(t.clock.advance('')).rejects.toThrow(/takes a duration/);
    expect(durationMs('500ms')).toBe(500);
    expect(durationMs('1h30m')).toBe(90 * 60_000);
    expect(durationMs('2d 1s')).toBe(2 * DAY + 1000);
    expect(durationMs(250)).toBe(250);
    // Beyond the span of a Date: refused before the clock moves, which would leave the tenant unusable.
    expect(() => durationMs('100000000d')).toThrow(TypeError);
    expect(() => durationMs(1e16)).toThrow(/shorter than 100000000d/);
    expect(() => durationMs(`${'9'.repeat(400)}ms`)).toThrow(/shorter than 100000000d/);
    await expect(t.clock.advance('100000000d')).rejects.toThrow(TypeError);
    await expect(svc.emulator.tenants.clock(t.id).advance(1e16)).rejects.toThrow(EmulatorError);
    expect(t.clock.now().getTime() - Date.now()).toBeLessThan(SLACK);
    expect((await reactorNow(t)).now - Date.now()).toBeLessThan(SLACK);
    await t.dispose();
  });

  it("is the emulator's per tenant: an unknown tenant is refused, the time of a tenant's events is its own", async () => {
    const { emulator } = svc;
    await expect(emulator.tenants.clock('00000000-0000-4000-8000-000000000000').advance(1)).rejects.toThrow(
      EmulatorError,
    );
    const t = await svc.tenant();
    await emulator.tenants.clock(t.id).advance(3 * DAY);
    const times: string[] = [];
    const stop = emulator.events.subscribe((event) => {
      if ('tenantId' in event && event.tenantId === t.id) times.push(event.time);
    });
    await reactorNow(t);
    stop();
    expect(times.length).toBeGreaterThan(0);
    for (const time of times) expect(Date.parse(time) - Date.now()).toBeGreaterThan(2 * DAY);
    await t.dispose();
  });
});
