import { describe, expect, it } from 'vitest';
import type { EmulatorEvent } from '../../src/api/events.js';
import { createEmulator } from '../../src/emulator/index.js';
import { TenantEventLog } from '../../src/emulator/event-log.js';
import { EventHub } from '../../src/emulator/events.js';
import { createApplication, createTenant, startEmulator } from '../helpers/emulator.js';
import { startReceiver } from '../helpers/receiver.js';
import { eventually } from '../helpers/wait.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('EventHub', () => {
  it('gives every subscriber every event, stamped with the ISO time it was published', () => {
    const hub = new EventHub();
    const first: EmulatorEvent[] = [];
    const second: EmulatorEvent[] = [];
    hub.subscribe((event) => first.push(event));
    hub.subscribe((event) => second.push(event));
    hub.publish({ type: 'warning', message: 'one' });
    expect(first).toEqual([{ type: 'warning', message: 'one', time: expect.stringMatching(ISO) }]);
    expect(second).toEqual(first);
    expect(Math.abs(Date.parse(first[0]!.time) - Date.now())).toBeLessThan(60_000);
  });

  it('stops calling a subscriber once it unsubscribes, and keeps the others', () => {
    const hub = new EventHub();
    const kept: string[] = [];
    const dropped: string[] = [];
    hub.subscribe((event) => kept.push(event.type));
    const unsubscribe = hub.subscribe((event) => dropped.push(event.type));
    hub.publish({ type: 'warning', message: 'a' });
    unsubscribe();
    unsubscribe();
    hub.publish({ type: 'error', message: 'b' });
    expect(kept).toEqual(['warning', 'error']);
    expect(dropped).toEqual(['warning']);
  });

  it('calls a function subscribed twice twice, and unsubscribes each subscription on its own', () => {
    const hub = new EventHub();
    let calls = 0;
    const listener = () => void calls++;
    const firstOff = hub.subscribe(listener);
    hub.subscribe(listener);
    hub.publish({ type: 'warning', message: 'a' });
    firstOff();
    hub.publish({ type: 'warning', message: 'b' });
    expect(calls).toBe(3);
  });

  it('a subscriber that throws breaks neither the others nor the publisher, and is told to the others', () => {
    const hub = new EventHub();
    const seen: EmulatorEvent[] = [];
    hub.subscribe(() => {
      throw new Error('listener bug');
    });
    hub.subscribe((event) => seen.push(event));
    expect(() => hub.publish({ type: 'warning', message: 'a' })).not.toThrow();
    expect(seen.map((event) => event.type)).toEqual(['error', 'warning']);
    expect(seen[0]).toMatchObject({
      type: 'error',
      message: 'an event subscriber failed: listener bug',
      time: expect.stringMatching(ISO),
    });
  });

  it('does not go round when every subscriber throws', () => {
    const hub = new EventHub();
    let calls = 0;
    for (let i = 0; i < 2; i++) {
      hub.subscribe(() => {
        calls++;
        throw new Error('always');
      });
    }
    expect(() => hub.publish({ type: 'warning', message: 'a' })).not.toThrow();
    // Each gets the event once, and the failure of the first once: bounded.
    expect(calls).toBeLessThanOrEqual(4);
  });
});

describe('TenantEventLog', () => {
  it('keeps each tenant its last events, oldest first, past any number of events', () => {
    const hub = new EventHub();
    const log = new TenantEventLog(hub, 3);
    const messages = (tenantId: string) =>
      log.recentOf(tenantId).map((event) => (event.type === 'request' ? event.path : event.type));
    const request = (tenantId: string, path: string) =>
      hub.publish({ type: 'request', method: 'GET', path, status: 200, ms: 1, traceId: path, tenantId });
    request('t1', '/1');
    request('t1', '/2');
    expect(messages('t1')).toEqual(['/1', '/2']);
    for (let i = 3; i <= 8; i++) request('t1', `/${i}`);
    request('t2', '/other');
    hub.publish({ type: 'warning', message: 'no tenant' });
    expect(messages('t1')).toEqual(['/6', '/7', '/8']);
    request('t1', '/9');
    expect(messages('t1')).toEqual(['/7', '/8', '/9']);
    expect(messages('t2')).toEqual(['/other']);
    expect(messages('t3')).toEqual([]);
  });
});

describe('the emulator’s events', () => {
  it('reach subscribers that subscribe right after createEmulator, and onEvent, from the start', async () => {
    const viaOption: EmulatorEvent[] = [];
    const emulator = createEmulator({ inMemory: true, port: 0, onEvent: (event) => viaOption.push(event) });
    const viaSubscribe: EmulatorEvent[] = [];
    emulator.events.subscribe((event) => viaSubscribe.push(event));
    try {
      const { url } = await emulator.ready;
      expect(emulator.url).toBe(url);
      await fetch(`${url}/health`);
      await eventually(() =>
        expect(viaSubscribe.some((event) => event.type === 'request' && event.path === '/health')).toBe(true),
      );
      expect(viaOption.filter((event) => event.type === 'request')).toEqual(
        viaSubscribe.filter((event) => event.type === 'request'),
      );
      for (const event of viaSubscribe) expect(event.time).toMatch(ISO);
    } finally {
      await emulator.dispose();
    }
  });

  it('a subscriber that throws does not break the emulator', async () => {
    const emulator = createEmulator({ inMemory: true, port: 0 });
    emulator.events.subscribe(() => {
      throw new Error('a broken dashboard');
    });
    try {
      const { url } = await emulator.ready;
      expect((await fetch(`${url}/health`)).status).toBe(200);
      expect((await fetch(`${url}/health`)).status).toBe(200);
    } finally {
      await emulator.dispose();
    }
  });

  it('name the tenant of requests, runs of user code, console lines and webhook attempts', async () => {
    const emu = await startEmulator({ inMemory: true, webhooks: { attempts: 1 } });
    const other = await createTenant(emu);
    // A request of each tenant, and one nobody is authenticated for.
    await emu.call('GET', '/applications');
    await emu.call('GET', '/applications', { key: other.management_key });
    await emu.call('GET', '/applications', { key: null });
    const requests = () => emu.events.filter((event) => event.type === 'request' && event.path === '/applications');
    await eventually(() => expect(requests()).toHaveLength(3));
    expect(requests().map((event) => (event as { tenantId?: string }).tenantId)).toEqual([
      emu.tenantId,
      other.id,
      undefined,
    ]);

    // A reactor of the other tenant: its run, its console line and its webhook attempt are the other tenant's.
    const reactor = await emu.call('POST', '/reactors', {
      key: other.management_key,
      body: {
        name: 'talks',
        code: "module.exports = async () => { console.log('hello'); return { raw: 1 }; };",
        configuration: {},
      },
    });
    const receiver = await startReceiver(() => 204);
    const invoked = await emu.call('POST', `/reactors/${reactor.body.id}/react`, {
      key: other.private_key,
      body: { callback_url: receiver.url },
    });
    expect(invoked.status).toBe(202);
    await eventually(() => expect(emu.events.some((event) => event.type === 'webhook')).toBe(true));
    for (const type of ['invocation', 'console', 'webhook'] as const) {
      expect(
        emu.events.find((event) => event.type === type),
        type,
      ).toMatchObject({ tenantId: other.id });
    }

    // A proxy call is the proxy's tenant's, whoever calls.
    const app = await createApplication(emu, { type: 'private', permissions: ['token:use'] });
    const proxy = await emu.call('POST', '/proxies', {
      key: other.management_key,
      body: { name: 'p', destination_url: receiver.url, require_auth: false },
    });
    await emu.call('POST', '/proxy', { key: app.key, headers: { 'svc-proxy-key': proxy.body.key }, body: {} });
    await eventually(() =>
      expect(emu.events.some((event) => event.type === 'request' && event.path === '/proxy')).toBe(true),
    );
    expect(emu.events.find((event) => event.type === 'request' && event.path === '/proxy')).toMatchObject({
      tenantId: other.id,
    });
  });
});

describe('the request event of a proxy call', () => {
  it('counts the tokens it detokenized, never their values', async () => {
    const emu = await startEmulator({ inMemory: true });
    const receiver = await startReceiver(() => 200);
    const proxy = await emu.call('POST', '/proxies', { body: { name: 'p', destination_url: receiver.url } });
    const tokens = await Promise.all(
      ['4242424242424242', 'secret-2'].map(
        async (data) =>
          (await emu.call('POST', '/tokens', { key: emu.privateKey, body: { type: 'token', data } })).body.id,
      ),
    );
    const call = (body: unknown) =>
      emu.call('POST', '/proxy', { key: emu.privateKey, headers: { 'svc-proxy-key': proxy.body.key }, body });
    // Two tokens, one of them twice: two detokenized; then a body without any.
    expect((await call({ a: `{{ ${tokens[0]} }}`, b: `{{ ${tokens[1]} }}`, c: `{{ ${tokens[0]} }}` })).status).toBe(
      200,
    );
    expect((await call({ plain: true })).status).toBe(200);
    const proxied = () => emu.events.filter((event) => event.type === 'request' && event.path === '/proxy');
    await eventually(() => expect(proxied()).toHaveLength(2));
    expect(proxied().map((event) => (event as { detokenized?: number }).detokenized)).toEqual([2, undefined]);
    expect(JSON.stringify(emu.events)).not.toMatch(/4242424242424242|secret-2/);
  });
});
