import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/client/index.js';
import { startSvc, type Svc } from '../../src/testing/index.js';
import { childPids, echoDestination, FIXTURE, FIXTURE_DIR } from './helpers.js';

describe('svc/testing: startSvc and tenant()', () => {
  let svc: Svc;
  let destination: Awaited<ReturnType<typeof echoDestination>>;

  beforeAll(async () => {
    destination = await echoDestination();
    process.env.SVC_TESTING_DESTINATION = destination.url;
    svc = await startSvc({ config: FIXTURE });
  });

  afterAll(async () => {
    await svc?.stop();
    await destination?.close();
  });

  it('serves on a URL of its own, and a tenant has the keys of svc.yaml by name', async () => {
    expect(svc.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const t = await svc.tenant();
    expect(Object.keys(t.keys).sort()).toEqual(['backend', 'checkout', 'management', 'private', 'reader']);
    expect(t.keys.backend).toMatch(/^key_local_pvt_/);
    expect(t.keys.checkout).toMatch(/^key_local_pub_/);
    const self = await t.client.applications.self();
    expect(self.tenant_id).toBe(t.id);
    const reactors = await t.client.reactors.all();
    expect(reactors.map((reactor) => reactor.name).sort()).toEqual(['counter', 'echo', 'fail', 'noop', 'tokenize']);
    const proxies = await t.client.proxies.all();
    expect(proxies.map((proxy) => proxy.name).sort()).toEqual(['plain', 'upstream']);
    expect(reactors.find((reactor) => reactor.name === 'echo')?.configuration).toEqual({ GREETING: 'hello' });
    await t.dispose();
  });

  it('invokes a reactor: status, body, the call console lines and its trace id', async () => {
    const t = await svc.tenant();
    const result = await t.reactors.invoke('echo', { amount: 42 });
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ raw: { args: { amount: 42 }, greeting: 'hello' } });
    expect(result.logs).toEqual(['echo {"amount":42}']);
    expect(result.traceId).toBe(result.headers['svc-trace-id']);
    const failed = await t.reactors.invoke('fail');
    expect(failed.status).toBe(400);
    expect(failed.body).toMatchObject({
      type: 'urn:svc:problem:user-code',
      detail: 'Bad Request',
      errors: { error: ['always refused'] },
    });
    expect(failed.logs).toEqual(['about to fail']);
    await expect(t.reactors.invoke('nope')).rejects.toThrow(/no reactor named "nope".*counter/);
    await t.dispose();
  });

  it('gives each tenant keys, tokens and module state of its own', async () => {
    const a = await svc.tenant();
    const b = await svc.tenant();
    expect(a.keys.backend).not.toBe(b.keys.backend);
    expect(a.keys.management).not.toBe(b.keys.management);
    expect((await a.reactors.invoke('counter')).body).toEqual({ raw: { count: 1 } });
    expect((await a.reactors.invoke('counter')).body).toEqual({ raw: { count: 2 } });
    expect((await b.reactors.invoke('counter')).body).toEqual({ raw: { count: 1 } });
    const made = await a.reactors.invoke('tokenize', { secret: 's3cret' });
    const tokenId = (made.body as { tokens: { secret: string } }).tokens.secret;
    expect((await a.client.tokens.get(tokenId)).id).toBe(tokenId);
    await expect(b.client.tokens.get(tokenId)).rejects.toMatchObject({ status: 404 });
    // Another tenant's key opens nothing here.
    const other = await b.client.applications.self();
    expect(other.tenant_id).toBe(b.id);
    await Promise.all([a.dispose(), b.dispose()]);
  });

  it("runs a fork's code in the template's sandbox processes: its first call starts none", async () => {
    const warm = await svc.tenant();
    await warm.reactors.invoke('noop');
    const before = childPids().sort();
    const forks = await Promise.all([svc.tenant(), svc.tenant(), svc.tenant()]);
    for (const t of forks) expect((await t.reactors.invoke('noop')).status).toBe(200);
    expect(childPids().sort()).toEqual(before);
    await Promise.all([warm, ...forks].map((t) => t.dispose()));
  });

  it('disposes a tenant: its keys stop working, twice is the same as once', async () => {
    const t = await svc.tenant();
    await t.reactors.invoke('counter');
    await t.dispose();
    await t.dispose();
    const refused = await t.client.applications.self().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(401);
    // The template and the other tenants are untouched.
    const next = await svc.tenant();
    expect((await next.reactors.invoke('counter')).body).toEqual({ raw: { count: 1 } });
    await next.dispose();
  });

  it('calls a proxy: transforms run, their console lines come back, the destination gets the key', async () => {
    const t = await svc.tenant();
    const result = await t.proxies.invoke('upstream', { method: 'POST', path: '/charges', body: { amount: 5 } });
    expect(result.status).toBe(200);
    const upstream = (result.body as { upstream: { url: string; body: string; headers: Record<string, string> } })
      .upstream;
    expect(upstream.url).toBe('/api/charges');
    expect(JSON.parse(upstream.body)).toEqual({ amount: 5, transformed: true });
    expect(upstream.headers.authorization).toBe('Bearer test-key');
    expect(result.logs).toEqual(['request transform POST']);
    const anonymous = await t.proxies.invoke('plain', { path: '/ping', key: null, headers: { 'x-test': '1' } });
    expect(anonymous.status).toBe(200);
    expect((anonymous.body as { headers: Record<string, string> }).headers['x-test']).toBe('1');
    await t.dispose();
  });

  it('settles: an asynchronous invocation and its signed webhook are done when settle() resolves', async () => {
    const t = await svc.tenant();
    const callbackUrl = await t.webhooks.receiver();
    const started = await t.reactors.invoke('echo', { n: 1 }, { callbackUrl });
    expect(started.status).toBe(202);
    await t.settle();
    const received = t.webhooks.received();
    expect(received).toHaveLength(1);
    expect(received[0]!.body).toMatchObject({ status: 'completed', raw: { args: { n: 1 }, greeting: 'hello' } });
    // Another tenant's settle does not wait for, nor see, this one's work.
    const other = await svc.tenant();
    await other.settle();
    expect(other.webhooks.received()).toEqual([]);
    await Promise.all([t.dispose(), other.dispose()]);
  });

  it("answers 500 when a receiver's reply throws or gives no HTTP status, and lists the delivery with why", async () => {
    const t = await svc.tenant();
    const statuses: (number | undefined)[] = [];
    const stop = svc.emulator.events.subscribe((event) => {
      if (event.type === 'webhook' && event.tenantId === t.id) statuses.push(event.status);
    });
    let n = 0;
    const callbackUrl = await t.webhooks.receiver(() => {
      n++;
      if (n === 1) throw new Error('boom in reply');
      return n === 2 ? 1000 : 200;
    });
    expect((await t.reactors.invoke('echo', { n: 1 }, { callbackUrl })).status).toBe(202);
    // The retries (1 s, then 2 s later) are run by the tenant's clock rather than waited for.
    await t.clock.advance('1h');
    await t.settle();
    stop();
    expect(statuses).toEqual([500, 500, 200]);
    const received = t.webhooks.received();
    expect(received).toHaveLength(3);
    expect(received[0]!.replyError).toMatch(/boom in reply/);
    expect(received[1]!.replyError).toMatch(/returned 1000, .*200 to 599/);
    expect(received[2]!.replyError).toBeUndefined();
    await t.dispose();
  });

  it('takes svc.yaml as an object too, its files read from projectDir', async () => {
    await using second = await startSvc({
      config: {
        applications: { app: { type: 'private', permissions: ['token:use'] } },
        reactors: { only: { code: 'reactors/noop.js' } },
      },
      projectDir: FIXTURE_DIR,
    });
    const t = await second.tenant();
    expect(Object.keys(t.keys).sort()).toEqual(['app', 'management', 'private']);
    expect((await t.reactors.invoke('only')).body).toEqual({ raw: null });
  });

  it('says what is wrong with a svc.yaml that does not load, and starts nothing', async () => {
    await expect(startSvc({ config: `${FIXTURE_DIR}missing.yaml` })).rejects.toThrow(/Cannot read .*missing\.yaml/);
    await expect(
      startSvc({ config: { reactors: { broken: { code: 'reactors/nowhere.js' } } }, projectDir: FIXTURE_DIR }),
    ).rejects.toThrow(/nowhere\.js/);
  });

  it('a tenant asked for as the svc stops is refused, not handed back gone; a dispose after stop is a no-op', async () => {
    const other = await startSvc({
      config: { reactors: { only: { code: 'reactors/noop.js' } } },
      projectDir: FIXTURE_DIR,
    });
    const kept = await other.tenant();
    // Asked before the stop, made after it began: the tenant would be one of a stopped emulator.
    const asked = other.tenant();
    const stopped = other.stop();
    await expect(asked).rejects.toThrow(/svc\/testing: this svc was stopped while the tenant was being made/);
    await stopped;
    await kept.dispose();
  });

  it("passes on a failure of t.dispose()'s delete while the svc runs", async () => {
    const t = await svc.tenant();
    const { tenants } = svc.emulator;
    const remove = tenants.delete;
    tenants.delete = async () => {
      throw new Error('the store is not writable');
    };
    try {
      await expect(t.dispose()).rejects.toThrow(/the store is not writable/);
    } finally {
      tenants.delete = remove;
    }
    await tenants.delete(t.id);
  });

  it('stops once, whatever the number of calls; no tenant after', async () => {
    const other = await startSvc({
      config: { reactors: { only: { code: 'reactors/noop.js' } } },
      projectDir: FIXTURE_DIR,
    });
    const t = await other.tenant();
    await Promise.all([other.stop(), other.stop()]);
    await other.stop();
    await expect(other.tenant()).rejects.toThrow(/stopped/);
    await expect(t.client.applications.self()).rejects.toThrow();
  });
});
