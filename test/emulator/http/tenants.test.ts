import { rawConnection, rawRequest } from '../../helpers/raw-http.js';
import { describe, expect, it } from 'vitest';
import type { IncomingMessage } from 'node:http';
import { createHttpServer } from '../../../src/emulator/http/front.js';
import { listen } from '../../../src/emulator/http/listen.js';
import { adminGuard, isLoopback } from '../../../src/emulator/http/routes/emulator.js';
import { HttpError } from '../../../src/emulator/errors.js';
import { randomBytes } from 'node:crypto';
import { Cipher } from '../../../src/emulator/crypto/cipher.js';
import { TenantEventLog } from '../../../src/emulator/event-log.js';
import { EventHub } from '../../../src/emulator/events.js';
import { Runtime } from '../../../src/emulator/runtime/index.js';
import { OutboundGateway } from '../../../src/emulator/outbound/index.js';
import { ProxyPipeline } from '../../../src/emulator/proxy/pipeline.js';
import { createServices } from '../../../src/emulator/services/index.js';
import { Store } from '../../../src/emulator/store/store.js';
import { createTenant, http, startEmulator } from '../../helpers/emulator.js';

describe('tenants', () => {
  it('creates a tenant with its own management and private keys', async () => {
    const emu = await startEmulator({ inMemory: true });
    const tenant = await createTenant(emu, 'acme');
    expect(tenant).toMatchObject({ name: 'acme' });
    expect(tenant.id).not.toBe(emu.tenantId);
    const self = await http(`${emu.url}/applications/key`, 'GET', { key: tenant.management_key });
    expect(self.status).toBe(200);
    expect(self.body.tenant_id).toBe(tenant.id);
    expect(self.body.type).toBe('management');
  });

  it('accepts given keys and validates the body', async () => {
    const emu = await startEmulator({ inMemory: true });
    const ok = await emu.call('POST', '/_emulator/tenants', {
      key: null,
      body: { name: 't', management_key: 'tenant-two-management-key' },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.management_key).toBe('tenant-two-management-key');
    const bad = await emu.call('POST', '/_emulator/tenants', {
      key: null,
      body: { management_key: 'short', extra: 1 },
    });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors)).toEqual(expect.arrayContaining(['management_key', 'extra']));
    // no body at all is fine
    expect((await emu.call('POST', '/_emulator/tenants', { key: null })).status).toBe(201);
  });

  it("never lets one tenant see, change or learn of another tenant's Applications", async () => {
    const emu = await startEmulator({ inMemory: true });
    const other = await createTenant(emu);
    const mine = (
      await emu.call('POST', '/applications', { body: { name: 'mine', type: 'private', permissions: ['token:read'] } })
    ).body;
    const as = (key: string) => ({ key });

    const theirList = await emu.call('GET', '/applications', as(other.management_key));
    expect(theirList.body.data.every((app: { tenant_id: string }) => app.tenant_id === other.id)).toBe(true);
    expect(theirList.body.data.map((app: { id: string }) => app.id)).not.toContain(mine.id);
    const filtered = await emu.call('GET', `/applications?id=${mine.id}`, as(other.management_key));
    expect(filtered.body.data).toEqual([]);
    expect(filtered.body.pagination.total_items).toBe(0);

    const unknown = await emu.call(
      'GET',
      '/applications/00000000-0000-4000-8000-000000000000',
      as(other.management_key),
    );
    for (const [method, path, body] of [
      ['GET', `/applications/${mine.id}`, undefined],
      ['PUT', `/applications/${mine.id}`, { name: 'stolen' }],
      ['POST', `/applications/${mine.id}/regenerate`, undefined],
      ['DELETE', `/applications/${mine.id}`, undefined],
    ] as const) {
      const result = await emu.call(method, path, { ...as(other.management_key), body });
      expect(result.status, `${method} ${path}`).toBe(404);
      // indistinguishable from an id that does not exist anywhere
      expect(result.body.title).toBe(unknown.body.title);
      expect(result.body.detail).toBe(`No Application with id ${mine.id}.`);
    }
    const still = await emu.call('GET', `/applications/${mine.id}`);
    expect(still.body.name).toBe('mine');
    // its key was not regenerated either: it still authenticates (403 for lack of permission, not 401)
    expect((await emu.call('GET', '/applications/key', { key: mine.key })).status).toBe(403);
  });

  it('answers the admin route only to loopback callers', async () => {
    const store = await Store.open({ inMemory: true });
    const runtime = new Runtime();
    const services = createServices(store, { cipher: new Cipher(randomBytes(32)), runtime, emit: () => {} });
    const gateway = new OutboundGateway();
    const pipeline = new ProxyPipeline({ ...services, tier: 'enterprise', emit: () => {}, gateway });
    const server = createHttpServer({
      services,
      pipeline,
      emit: () => {},
      eventLog: new TenantEventLog(new EventHub()),
    });
    try {
      // A caller from another address (the guard reads the socket's remote address).
      const remote = {
        socket: { remoteAddress: '10.1.2.3' },
        headers: { host: 'localhost' },
        url: '/_emulator/tenants',
      };
      let refused: unknown;
      try {
        adminGuard(remote as unknown as IncomingMessage);
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(HttpError);
      expect((refused as HttpError).status).toBe(403);
      expect((refused as HttpError).detail).toMatch(/loopback/);
      const url = await listen(server, 0, '127.0.0.1');
      const local = await fetch(`${url}/_emulator/tenants`, { method: 'POST' });
      expect(local.status).toBe(201);
    } finally {
      await server.closeGracefully();
      await services.dispose();
      await runtime.dispose();
      await gateway.close();
    }
  });

  it('refuses an absolute request target naming another host, whatever Host says (an attacker review)', async () => {
    const emu = await startEmulator({ inMemory: true });
    const connection = await rawConnection(emu.url);
    const body = '{"name":"rebound"}';
    connection.send(
      rawRequest(
        emu.url,
        'POST http://evil.example/_emulator/tenants HTTP/1.1',
        ['content-type: application/json', `content-length: ${body.length}`],
        body,
      ),
    );
    const answer = await connection.next();
    expect(answer !== 'closed' && answer.status).toBe(403);
    const local = await rawConnection(emu.url);
    local.send(
      rawRequest(
        emu.url,
        `POST ${emu.url}/_emulator/tenants HTTP/1.1`,
        ['content-type: application/json', `content-length: ${body.length}`],
        body,
      ),
    );
    const allowed = await local.next();
    expect(allowed !== 'closed' && allowed.status).toBe(201);
  });

  it('recognises loopback addresses', () => {
    for (const address of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1'])
      expect(isLoopback(address), address).toBe(true);
    for (const address of ['10.0.0.1', '192.168.1.2', '::ffff:10.0.0.1', 'fe80::1', '', undefined])
      expect(isLoopback(address), String(address)).toBe(false);
  });
});
