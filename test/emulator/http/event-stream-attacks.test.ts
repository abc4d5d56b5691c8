import net from 'node:net';
import { Client, Pool, request } from 'undici';
import { describe, expect, onTestFinished, test, vi } from 'vitest';
import type { EmulatorEventInit } from '../../../src/api/events.js';
import { TenantEventLog } from '../../../src/emulator/event-log.js';
import { EventHub } from '../../../src/emulator/events.js';
import { createHttpServer } from '../../../src/emulator/http/front.js';
import { listen } from '../../../src/emulator/http/listen.js';
import { createTenant, startEmulator } from '../../helpers/emulator.js';
import { rawConnection, rawRequest } from '../../helpers/raw-http.js';
import { startReceiver } from '../../helpers/receiver.js';
import { createReactor, emulatorParts, parseEvents } from '../../helpers/event-stream.js';
import { eventually } from '../../helpers/wait.js';

/** What a reactor or a transform says: one console line, then an answer. */
const SAYS = (word: string) => `module.exports = async (req) => {
  console.log('${word}');
  return { raw: { ok: true } };
};
`;

/** A reactor that writes one console line of `n` characters. */
const LONG_LINE = `module.exports = async (req) => {
  console.log('x'.repeat(req.args.n) + ' #' + req.args.i);
  return { raw: {} };
};
`;

const TRANSFORM_SAYS = `module.exports = async (req) => {
  console.log('their transform says');
  return { body: {}, headers: {} };
};
`;

describe('GET /_emulator/events: tenants never see each other', () => {
  test("no filter finds another tenant's events: its reactor's id or name, its proxy, its trace id", async () => {
    const emu = await startEmulator({ inMemory: true });
    const other = await createTenant(emu);
    const theirs = await createReactor(emu, other.management_key, 'theirs', SAYS('their secret line'));
    const called = await emu.call('POST', `/reactors/${theirs}/react`, { key: other.private_key, body: {} });
    expect(called.status).toBe(200);
    const traceId = String(called.headers['svc-trace-id']);

    const destination = await startReceiver(() => 200, '/');
    const proxy = await emu.call('POST', '/proxies', {
      key: other.management_key,
      body: {
        name: 'their-proxy',
        destination_url: destination.url,
        require_auth: false,
        request_transform: { code: TRANSFORM_SAYS },
      },
    });
    expect(proxy.status, proxy.text).toBe(201);
    const proxied = await emu.call('POST', '/proxy', {
      key: null,
      headers: { 'svc-proxy-key': proxy.body.key },
      body: { a: 1 },
    });
    expect(proxied.status, proxied.text).toBe(200);
    await eventually(() =>
      expect(emu.events.some((event) => event.type === 'console' && event.text === 'their transform says')).toBe(true),
    );
    // Events without a tenant exist too: a request the emulator could not read.
    const bad = await rawConnection(emu.url);
    bad.send('NOT HTTP\r\n\r\n');
    await bad.closed;

    for (const query of [
      '',
      `reactor=${theirs}`,
      'reactor=theirs',
      `proxy=${proxy.body.id}`,
      'proxy=their-proxy',
      `request=${traceId}`,
    ]) {
      const answer = await emu.call('GET', `/_emulator/events?${query}`);
      expect(answer.status, query).toBe(200);
      expect(answer.text, query).not.toContain('their');
      expect(answer.text, query).not.toContain(other.id);
      expect(answer.text, query).not.toContain(traceId);
      for (const event of parseEvents(answer.text))
        expect('tenantId' in event && event.tenantId, query).toBe(emu.tenantId);
    }
  });

  test('a key that is missing or unknown is a 401, a private key a 403, each a problem', async () => {
    const emu = await startEmulator({ inMemory: true });
    for (const [key, status] of [
      [null, 401],
      ['key_unknown_0123456789', 401],
      [emu.privateKey, 403],
    ] as const) {
      const answer = await emu.call('GET', '/_emulator/events?follow=1', { key });
      expect(answer.status).toBe(status);
      expect(String(answer.headers['content-type'])).toMatch(/^application\/problem\+json/);
    }
  });
});

describe('GET /_emulator/events: no secret in what it streams', () => {
  test('a request is shown by its path, without the query string that may carry a key', async () => {
    const emu = await startEmulator({ inMemory: true });
    const listed = await emu.call('GET', '/reactors?svc-api-key=leaked-key-in-query&svc-proxy-key=leaked-proxy-key');
    expect(listed.status).toBe(200);
    const text = (await emu.call('GET', '/_emulator/events')).text;
    expect(text).toContain('"path":"/reactors"');
    expect(text).not.toContain('leaked');
  });

  test("a webhook's callback URL is shown without its credentials, query string or fragment", async () => {
    const emu = await startEmulator({ inMemory: true, webhooks: { attempts: 1, retryBaseMs: 10 } });
    const hook = await startReceiver(() => 200, '/hooks/cb');
    const id = await createReactor(emu, emu.managementKey, 'hooked', SAYS('hooked'));
    const url = new URL(hook.url);
    const callback = `http://alice:pa55word@${url.host}/hooks/cb?token=query-secret#fragment-secret`;
    const accepted = await emu.call('POST', `/reactors/${id}/react`, {
      key: emu.privateKey,
      body: { args: {}, callback_url: callback },
    });
    expect(accepted.status, accepted.text).toBe(202);
    await eventually(() => expect(emu.events.some((event) => event.type === 'webhook')).toBe(true), 8000);
    const events = parseEvents((await emu.call('GET', `/_emulator/events?reactor=${id}`)).text);
    const webhook = events.find((event) => event.type === 'webhook');
    expect(webhook).toMatchObject({ type: 'webhook', url: `http://${url.host}/hooks/cb` });
    const text = JSON.stringify(events);
    for (const secret of ['alice', 'pa55word', 'query-secret', 'fragment-secret']) expect(text).not.toContain(secret);
  });
});

/**
 * The emulator's HTTP server as index.ts builds it, with its event log in reach for its `following` count.
 */
async function bareServer(timeouts: { shutdownGraceMs?: number } = {}) {
  const { hub, services, pipeline, eventLog, close } = await emulatorParts();
  const server = createHttpServer({ services, pipeline, emit: hub.publish, eventLog, timeouts });
  const url = await listen(server, 0, '127.0.0.1');
  const { keys, tenantId } = await services.tenants.bootstrap({});
  onTestFinished(async () => {
    await server.closeGracefully();
    await close();
  });
  return { url, managementKey: keys.managementKey!, tenantId, eventLog, hub, server };
}

/** A follow stream on a raw connection that reads nothing once the stream is subscribed. */
async function pausedFollow(url: string, managementKey: string, eventLog: TenantEventLog, query: string) {
  const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  onTestFinished(() => void socket.destroy());
  socket.on('error', () => {});
  const before = eventLog.following;
  socket.write(rawRequest(url, `GET /_emulator/events?follow=1&${query} HTTP/1.1`, [`SVC-API-KEY: ${managementKey}`]));
  await eventually(() => expect(eventLog.following).toBe(before + 1));
  socket.pause();
  return socket;
}

describe('GET /_emulator/events: robustness', () => {
  test('recent events larger than the unsent bound still come whole to a client that reads', async () => {
    const emu = await startEmulator({ inMemory: true });
    const id = await createReactor(emu, emu.managementKey, 'long', LONG_LINE);
    for (let i = 0; i < 60; i++) {
      const called = await emu.call('POST', `/reactors/${id}/react`, {
        key: emu.privateKey,
        body: { args: { n: 60_000, i } },
      });
      expect(called.status).toBe(200);
    }
    await eventually(() => expect(emu.events.filter((event) => event.type === 'console')).toHaveLength(60));
    const answer = await emu.call('GET', '/_emulator/events?reactor=long');
    expect(answer.status).toBe(200);
    const lines = parseEvents(answer.text).filter((event) => event.type === 'console');
    // The newest line comes, and what comes is whole: the answer was ended, not cut.
    expect(lines.at(-1)).toMatchObject({ type: 'console', text: expect.stringMatching(/ #59$/) });
    expect(answer.text.endsWith('\n\n')).toBe(true);
  });

  test('a follow stream that nobody reads is ended once it holds too much, not grown', async () => {
    const { url, managementKey, tenantId, eventLog, hub } = await bareServer();
    const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    onTestFinished(() => void socket.destroy());
    socket.on('error', () => {});
    socket.write(rawRequest(url, 'GET /_emulator/events?follow=1 HTTP/1.1', [`SVC-API-KEY: ${managementKey}`]));
    await eventually(() => expect(eventLog.following).toBe(1));
    socket.pause();
    // 64 MiB of console lines, published until the stream is dropped (the kernel's buffers take some first).
    for (let i = 0; i < 1024 && eventLog.following > 0; i++) {
      hub.publish({ type: 'console', source: 'big', tenantId, level: 'log', text: 'y'.repeat(65_536) });
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(eventLog.following).toBe(0);
  });

  test('thousands of follow streams that connect and go away leave no subscription behind', async () => {
    const { url, managementKey, eventLog } = await bareServer();
    const client = new Pool(url, { connections: 50 });
    onTestFinished(() => client.close());
    for (let round = 0; round < 20; round++) {
      await Promise.all(
        Array.from({ length: 50 }, async () => {
          const controller = new AbortController();
          const stream = await client.request({
            method: 'GET',
            path: '/_emulator/events?follow=1',
            headers: { 'svc-api-key': managementKey },
            signal: controller.signal,
          });
          stream.body.on('error', () => {});
          controller.abort();
        }),
      );
    }
    await eventually(() => expect(eventLog.following).toBe(0));
  });

  test('a follow request whose client left before it was handled subscribes nothing', async () => {
    // The client is gone by the time its request is handled.
    const { url, managementKey, eventLog } = await bareServer();
    const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.on('error', () => {});
    socket.end(rawRequest(url, 'GET /_emulator/events?follow=1 HTTP/1.1', [`SVC-API-KEY: ${managementKey}`]));
    socket.destroy();
    // Another request, answered after the first was handled.
    expect((await request(`${url}/_emulator/events`, { headers: { 'svc-api-key': managementKey } })).statusCode).toBe(
      200,
    );
    await eventually(() => expect(eventLog.following).toBe(0));
  });

  test('HEAD is answered with the headers and ends; it follows nothing', async () => {
    const { url, managementKey, eventLog } = await bareServer();
    const client = new Client(url, { pipelining: 1 });
    onTestFinished(() => client.close());
    const head = await client.request({
      method: 'HEAD',
      path: '/_emulator/events?follow=1',
      headers: { 'svc-api-key': managementKey },
    });
    expect(head.statusCode).toBe(200);
    await head.body.text();
    expect(eventLog.following).toBe(0);
    // The same connection answers the next request: the HEAD answer was ended.
    const health = await client.request({ method: 'GET', path: '/health' });
    expect(health.statusCode).toBe(200);
    await health.body.text();
  });

  test('a stop does not wait for a follow stream whose client does not read', async () => {
    const { url, managementKey, tenantId, eventLog, hub, server } = await bareServer({ shutdownGraceMs: 60_000 });
    const big = (source: string): EmulatorEventInit => ({
      type: 'console',
      source,
      tenantId,
      level: 'log',
      text: 'y'.repeat(65_536),
    });
    const tick = () => new Promise((resolve) => setImmediate(resolve));
    // How many lines an unread connection takes before its stream is dropped (the kernel's buffers, then the bound).
    await pausedFollow(url, managementKey, eventLog, 'reactor=first');
    let room = 0;
    for (; eventLog.following > 0 && room < 1024; room++) {
      hub.publish(big('first'));
      await tick();
    }
    // Another one filled half a MiB short of that holds unsent data, and is not dropped for it.
    await pausedFollow(url, managementKey, eventLog, 'reactor=second');
    for (let i = 0; i < room - 8; i++) {
      hub.publish(big('second'));
      await tick();
    }
    expect(eventLog.following).toBe(1);
    // As dispose stops: the streams end first, then the server; far within the 60 s grace.
    eventLog.close();
    await server.closeGracefully();
    expect(eventLog.following).toBe(0);
  });

  test('a heartbeat due after a stop ended the stream writes nothing (a write after the end throws)', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    onTestFinished(() => void vi.useRealTimers());
    const { url, managementKey, eventLog } = await bareServer();
    const stream = await request(`${url}/_emulator/events?follow=1`, { headers: { 'svc-api-key': managementKey } });
    expect(stream.statusCode).toBe(200);
    const ended = stream.body.text();
    eventLog.close();
    // The next heartbeats come due while the ended answer is still being flushed.
    vi.advanceTimersByTime(60_000);
    await ended;
    expect(eventLog.following).toBe(0);
  });

  test.each([
    ['status=abc', /status/],
    ['follow=maybe', /follow/],
    ['reactor=a&reactor=b', /reactor/],
    ['request=a&request=b', /request/],
    [`proxy=${'p'.repeat(5000)}`, /proxy/],
  ])('?%s is a 400 problem', async (query, field) => {
    const emu = await startEmulator({ inMemory: true });
    const answer = await emu.call('GET', `/_emulator/events?${query}`);
    expect(answer.status).toBe(400);
    expect(String(answer.headers['content-type'])).toMatch(/^application\/problem\+json/);
    expect(Object.keys(answer.body.errors ?? {}).join(' ')).toMatch(field);
  });

  test('other methods are problems; the admin guard refuses other hosts and other sites', async () => {
    const emu = await startEmulator({ inMemory: true });
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const answer = await emu.call(method, '/_emulator/events', { body: {} });
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(String(answer.headers['content-type'])).toMatch(/^application\/problem\+json/);
    }
    for (const header of ['Origin: http://evil.example', 'Origin: null', 'Sec-Fetch-Site: cross-site']) {
      const answer = await emu.call('GET', '/_emulator/events', {
        headers: Object.fromEntries([header.split(': ') as [string, string]]),
      });
      expect(answer.status, header).toBe(403);
    }
    // DNS rebinding: a name that resolves to 127.0.0.1 still names itself in Host.
    const connection = await rawConnection(emu.url);
    connection.send(
      `GET /_emulator/events HTTP/1.1\r\nHost: rebound.example:${new URL(emu.url).port}\r\nSVC-API-KEY: ${emu.managementKey}\r\n\r\n`,
    );
    const rebound = await connection.next();
    expect(rebound !== 'closed' && rebound.status).toBe(403);
  });
});

describe('TenantEventLog: bounded memory', () => {
  const line = (tenantId: string, text = 'line'): EmulatorEventInit => ({
    type: 'console',
    source: 'code',
    tenantId,
    level: 'log',
    text,
  });

  test('many tenants: the least recently active ones are dropped, the active ones kept', () => {
    const hub = new EventHub();
    const log = new TenantEventLog(hub);
    hub.publish(line('busy'));
    const minted = 10_000;
    for (let i = 0; i < minted; i++) {
      hub.publish(line(`minted-${i}`));
      if (i % 10 === 0) hub.publish(line('busy'));
    }
    const kept = Array.from({ length: minted }, (_, i) => log.recentOf(`minted-${i}`).length).filter(Boolean);
    expect(kept.length).toBeLessThan(1000);
    expect(log.recentOf('minted-0')).toEqual([]);
    expect(log.recentOf(`minted-${minted - 1}`)).toHaveLength(1);
    expect(log.recentOf('busy').length).toBeGreaterThan(1);
    log.close();
  });

  test("long lines: a tenant's recent events are bounded in size as well as in number", () => {
    const hub = new EventHub();
    const log = new TenantEventLog(hub);
    for (let i = 0; i < 200; i++) hub.publish(line('t', `${'z'.repeat(65_536)} #${i}`));
    const kept = log.recentOf('t');
    const bytes = kept.reduce((sum, event) => sum + JSON.stringify(event).length, 0);
    // 200 lines of 64 KiB are 13 MiB: a few MiB at most are kept.
    expect(bytes).toBeLessThanOrEqual(4 << 20);
    expect(kept.at(-1)).toMatchObject({ text: expect.stringMatching(/ #199$/) });
    log.close();
  });
});
