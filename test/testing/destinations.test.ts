import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSvc, type Svc } from '../../src/testing/index.js';
import { bodyOf, httpsDestination } from '../emulator/outbound/destination.js';

const PROJECT = fileURLToPath(new URL('./destinations-fixture/svc.yaml', import.meta.url));
const API = 'https://api.example.com';
const CARD = '4242424242424242';

describe('svc/testing: t.destinations mocks destinations inside the emulator, per tenant', () => {
  let svc: Svc;

  beforeAll(async () => {
    // The reactor sends the card to the provider on purpose: its host is declared (the leak guard's fail default).
    svc = await startSvc({ config: PROJECT, leakGuard: { allowHosts: ['api.example.com'] } });
  });

  afterAll(async () => {
    await svc?.stop();
  });

  it('a proxy forward: the card arrives detokenized and transformed, and the transform’s own request is mocked', async () => {
    await using t = await svc.tenant();
    t.destinations
      .intercept('https://auth.example.com')
      .on('POST', '/oauth/token')
      .reply(200, { access_token: 'tok_1' });
    t.destinations.intercept(API).on('POST', '/v1/charges').reply(201, { id: 'ch_1' }, { 'x-request-id': 'req_9' });
    const card = await t.client.tokens.create({ type: 'token', data: CARD });

    const answer = await t.proxies.invoke('charges', {
      method: 'POST',
      path: '/v1/charges',
      body: { amount: 42, card: `{{ ${card.id} }}` },
    });

    expect(answer.status).toBe(201);
    expect(answer.body).toEqual({ id: 'ch_1' });
    expect(answer.headers['svc-proxy-destination-status']).toBe('201');
    expect(answer.headers['x-request-id']).toBe('req_9');
    const calls = t.destinations.calls();
    expect(calls.map((call) => `${call.from.kind} ${call.method} ${call.url}`)).toEqual([
      'transform POST https://auth.example.com/oauth/token',
      'proxy POST https://api.example.com/v1/charges',
    ]);
    const charge = calls[1]!;
    expect(JSON.parse(charge.body)).toEqual({ amount: 42, card: CARD, transformed: true });
    expect(charge.headers.authorization).toBe('Bearer tok_1');
    expect(charge).toMatchObject({ mocked: true, status: 201, path: '/v1/charges', from: { name: 'charges' } });
    expect(charge.from.traceId).toBe(answer.traceId);
    expect(calls[0]!.body).toBe('grant_type=client_credentials');
    expect(t.destinations.unmatched()).toEqual([]);
    expect(t.destinations.pending()).toEqual([]);
  });

  it('a reactor’s https request, answered by a function of the request (async allowed)', async () => {
    await using t = await svc.tenant();
    const card = await t.client.tokens.create({ type: 'token', data: CARD });
    t.destinations
      .intercept(API)
      .on('POST', '/v1/charges')
      .reply(async (request) => {
        await new Promise((resolve) => setImmediate(resolve));
        const { amount, card: number } = JSON.parse(request.body);
        return {
          status: 402,
          headers: { 'x-declined': 'yes' },
          body: { error: 'card_declined', amount, last4: number.slice(-4) },
        };
      });

    const result = await t.reactors.invoke('pay', {
      url: `${API}/v1/charges`,
      body: { amount: 7, card: `{{ ${card.id} }}` },
    });

    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({
      raw: { status: 402, type: 'application/json', text: '{"error":"card_declined","amount":7,"last4":"4242"}' },
    });
    const [call] = t.destinations.calls();
    expect(call).toMatchObject({
      method: 'POST',
      mocked: true,
      status: 402,
      from: { kind: 'reactor', name: 'reactor pay' },
    });
    expect(JSON.parse(call!.body)).toEqual({ amount: 7, card: CARD });
  });

  it('times(n), then the next request fails unmatched: a reactor’s call with the message, a proxy’s with a problem of its own', async () => {
    await using t = await svc.tenant();
    const mocks = t.destinations.intercept(API);
    mocks.on('POST', '/v1/charges').times(2).reply(201, { id: 'ch_1' });
    mocks.on('GET', '/v1/balance').reply(200, { available: 1 }).times(3);
    const pay = () => t.reactors.invoke('pay', { url: `${API}/v1/charges`, body: { amount: 1 } });

    expect((await pay()).body).toMatchObject({ raw: { status: 201 } });
    expect((await pay()).body).toMatchObject({ raw: { status: 201 } });
    const failed = await pay();
    // Thrown by the code as Node's https would fail it: a user-code problem with its message.
    expect(failed.status).toBe(500);
    expect(failed.body).toMatchObject({ type: 'urn:svc:problem:user-code' });
    expect((failed.body as { detail: string }).detail).toContain(
      'No mock of https://api.example.com matches POST /v1/charges; its mocks: POST /v1/charges (used up: answered 2), GET /v1/balance (3 left).',
    );
    const handled = await t.reactors.invoke('pay', { url: `${API}/v1/refunds`, body: { amount: 1 }, handle: true });
    expect(handled.body).toMatchObject({ raw: { code: 'ERR_SVC_NOT_MOCKED' } });
    expect((handled.body as { raw: { error: string } }).raw.error).toMatch(
      /^No mock of https:\/\/api\.example\.com matches POST \/v1\/refunds/,
    );

    const proxied = await t.proxies.invoke('plain', { method: 'DELETE', path: '/v1/customers/cus_1?force=1' });
    expect(proxied.status).toBe(502);
    expect(proxied.body).toMatchObject({
      proxy_error: {
        type: 'urn:svc:problem:destination-not-mocked',
        title: 'No destination mock matched',
        status: 502,
        method: 'DELETE',
        url: 'https://api.example.com/v1/customers/cus_1?force=1',
        mocks: ['POST /v1/charges (used up: answered 2)', 'GET /v1/balance (3 left)'],
      },
    });
    expect((proxied.body as { proxy_error: { detail: string } }).proxy_error.detail).toContain(
      'DELETE /v1/customers/cus_1?force=1',
    );

    expect(
      t.destinations.unmatched().map((request) => `${request.from.kind} ${request.method} ${request.path}`),
    ).toEqual(['reactor POST /v1/charges', 'reactor POST /v1/refunds', 'proxy DELETE /v1/customers/cus_1?force=1']);
    expect(t.destinations.calls()).toHaveLength(2);
    expect(t.destinations.pending()).toEqual([
      { origin: API, method: 'GET', path: '/v1/balance', remaining: 3, used: 0 },
    ]);
  });

  it('two forks mock the same origin differently: each answers only its own tenant', async () => {
    await using a = await svc.tenant();
    await using b = await svc.tenant();
    a.destinations.intercept(API).on('POST', '/v1/charges').persist().reply(201, { id: 'ch_a' });
    b.destinations.intercept(API).on('POST', '/v1/charges').persist().reply(201, { id: 'ch_b' });
    const pay = (t: typeof a) => t.reactors.invoke('pay', { url: `${API}/v1/charges`, body: {} });

    const answers = await Promise.all([pay(a), pay(b), pay(a), pay(b)]);

    expect(answers.map((answer) => JSON.parse((answer.body as { raw: { text: string } }).raw.text).id)).toEqual([
      'ch_a',
      'ch_b',
      'ch_a',
      'ch_b',
    ]);
    expect(a.destinations.calls()).toHaveLength(2);
    expect(b.destinations.calls()).toHaveLength(2);
    const c = await svc.tenant();
    // A third fork has no mocks: no mock of another tenant answers it (api.example.com is not reached).
    expect(c.destinations.calls()).toEqual([]);
    await c.dispose();
    // Disposed: its mocks and records are gone.
    expect(c.destinations.pending()).toEqual([]);
  });

  it('an origin without mocks goes to the network as before (a real loopback https server), and is recorded', async () => {
    await using t = await svc.tenant();
    const destination = await httpsDestination(async (request, response) => {
      const body = (await bodyOf(request)).toString();
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ path: request.url, body }));
    });
    t.destinations.intercept(API).on('*', /.*/).persist().reply(200, 'mocked');

    const real = await t.reactors.invoke('pay', {
      url: `${destination.url}/real?x=1`,
      body: { hello: 'world' },
      ca: destination.ca,
    });
    const mocked = await t.reactors.invoke('pay', { url: `${API}/anything`, method: 'PUT', body: {} });

    expect(real.body).toMatchObject({
      raw: { status: 200, text: JSON.stringify({ path: '/real?x=1', body: '{"hello":"world"}' }) },
    });
    expect(mocked.body).toMatchObject({ raw: { status: 200, type: 'text/plain; charset=utf-8', text: 'mocked' } });
    expect(t.destinations.calls().map(({ url, mocked, status, body }) => ({ url, mocked, status, body }))).toEqual([
      { url: `${destination.url}/real?x=1`, mocked: false, status: 200, body: '{"hello":"world"}' },
      { url: `${API}/anything`, mocked: true, status: 200, body: '{}' },
    ]);
  });

  it('keeps at most 64 KB of each recorded body (truncated: true), while mocks and destinations get it whole', async () => {
    await using t = await svc.tenant();
    const big = 'x'.repeat(200 * 1024);
    const KEPT = 64 * 1024;
    const seenByMock: number[] = [];
    t.destinations
      .intercept(API)
      .on('POST', '/v1/big')
      .times(2)
      .reply((request) => {
        seenByMock.push(request.body.length);
        return { status: 200 };
      });
    const destination = await httpsDestination(async (request, response) => {
      response.end(String((await bodyOf(request)).length));
    });

    const byProxy = await t.proxies.invoke('plain', { method: 'POST', path: '/v1/big', body: big });
    const byCode = await t.reactors.invoke('pay', { url: `${API}/v1/big`, body: { big } });
    // An origin without mocks: the body streams through to the destination, whole.
    const real = await t.reactors.invoke('pay', { url: `${destination.url}/real`, body: { big }, ca: destination.ca });
    const unmatched = await t.reactors.invoke('pay', { url: `${API}/v1/other`, body: { big }, handle: true });

    expect([byProxy.status, byCode.status, real.status, unmatched.status]).toEqual([200, 200, 200, 200]);
    const sentLength = JSON.stringify({ big }).length;
    expect(seenByMock).toEqual([big.length, sentLength]);
    expect((real.body as { raw: { text: string } }).raw.text).toBe(String(sentLength));
    const calls = t.destinations.calls();
    expect(
      calls.map(({ mocked, status, body, truncated }) => ({ mocked, status, length: body.length, truncated })),
    ).toEqual([
      { mocked: true, status: 200, length: KEPT, truncated: true },
      { mocked: true, status: 200, length: KEPT, truncated: true },
      { mocked: false, status: 200, length: KEPT, truncated: true },
    ]);
    expect(calls[1]!.body).toBe(JSON.stringify({ big }).slice(0, KEPT));
    const [missed] = t.destinations.unmatched();
    expect([missed!.body.length, missed!.truncated]).toEqual([KEPT, true]);
    // A body within the bound is kept whole, with no marker.
    await t.reactors.invoke('pay', { url: `${destination.url}/small`, body: { small: 1 }, ca: destination.ca });
    expect(t.destinations.calls().at(-1)).toMatchObject({ body: '{"small":1}', mocked: false, status: 200 });
    expect(t.destinations.calls().at(-1)).not.toHaveProperty('truncated');
  });

  it('a mocked 500 passes through the proxy as the destination’s answer', async () => {
    await using t = await svc.tenant();
    t.destinations.intercept(API).on('GET', '/v1/status').reply(500, { error: 'down' });

    const answer = await t.proxies.invoke('plain', { method: 'GET', path: '/v1/status' });

    expect(answer.status).toBe(500);
    expect(answer.body).toEqual({ error: 'down' });
    expect(answer.headers['svc-proxy-destination-status']).toBe('500');
    expect(t.destinations.calls()).toMatchObject([
      { method: 'GET', mocked: true, status: 500, from: { kind: 'proxy' } },
    ]);
  });

  it('matches by query, headers and body; replyWithError fails as an unreachable destination; delay answers late', async () => {
    await using t = await svc.tenant();
    const mocks = t.destinations.intercept(API);
    mocks.on('POST', '/v1/search', { body: { q: 'b' } }).reply(200, 'by json body');
    mocks.on('POST', '/v1/search', { body: /"q":"a"/ }).reply(200, 'by pattern');
    mocks.on('GET', '/v1/items', { query: { page: 2 } }).reply(200, 'page 2');
    mocks.on('GET', '/v1/items?page=1').reply(200, 'exact query');
    mocks
      .on('GET', '/v1/items', { headers: { 'Content-Type': /json/ } })
      .persist()
      .reply(200, 'by header');
    mocks
      .on('POST', (path) => path.startsWith('/v1/down'))
      .replyWithError({ code: 'ECONNRESET', message: 'socket hang up' })
      .times(2);
    mocks.on('GET', '/v1/slow').delay(20).reply(204);
    const text = async (url: string, method: string, body?: unknown) =>
      ((await t.reactors.invoke('pay', { url: `${API}${url}`, method, body, handle: true })).body as { raw: unknown })
        .raw;

    expect(await text('/v1/search', 'POST', { q: 'a' })).toMatchObject({ text: 'by pattern' });
    expect(await text('/v1/search', 'POST', { q: 'b' })).toMatchObject({ text: 'by json body' });
    expect(await text('/v1/items?page=2&size=10', 'GET')).toMatchObject({ text: 'page 2' });
    expect(await text('/v1/items?page=1', 'GET')).toMatchObject({ text: 'exact query' });
    expect(await text('/v1/items?page=1', 'GET')).toMatchObject({ text: 'by header' });
    expect(await text('/v1/down/now', 'POST', {})).toEqual({ error: 'socket hang up', code: 'ECONNRESET' });
    expect(await text('/v1/slow', 'GET')).toMatchObject({ status: 204, text: '' });
    const proxied = await t.proxies.invoke('plain', { method: 'POST', path: '/v1/down' });
    expect(proxied.status).toBe(502);
    expect(proxied.body).toMatchObject({
      proxy_error: {
        title: 'Destination unreachable',
        detail: `The destination ${API} could not be reached: socket hang up.`,
      },
    });
    expect(t.destinations.pending()).toEqual([]);
  });

  it('refuses what it cannot mean, at once and in words', async () => {
    await using t = await svc.tenant();
    expect(() => t.destinations.intercept('api.example.com')).toThrow(
      /takes an origin such as 'https:\/\/api\.example\.com'/,
    );
    expect(() => t.destinations.intercept(`${API}/v1`)).toThrow(/an origin only \('https:\/\/api\.example\.com'\)/);
    const mocks = t.destinations.intercept(API);
    expect(() => mocks.on('GET', 'v1/x')).toThrow(/a path starting with '\//);
    expect(() => mocks.on('GE T', '/x')).toThrow(/takes a method/);
    expect(() => mocks.on('GET', '/x').reply(42)).toThrow(/status 42: a status is an integer from 200 to 599/);
    expect(() => mocks.on('GET', '/x').times(0)).toThrow(/a whole number from 1/);
    const once = mocks.on('GET', '/x');
    once.reply(200);
    expect(() => once.reply(200)).toThrow(/already has its reply/);
    t.destinations
      .intercept(API)
      .on('GET', '/bad')
      .reply(() => ({ status: 42 }));
    const bad = await t.proxies.invoke('plain', { method: 'GET', path: '/bad' });
    expect(bad.status).toBe(500);
    expect((bad.body as { proxy_error: { detail: string } }).proxy_error.detail).toBe(
      'The reply function of the mock GET /bad returned status 42: a status is an integer from 200 to 599.',
    );
  });
});
