import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Page, Reactor } from '../../../src/api/types.js';
import type { EmulatorEvent, EmulatorOptions } from '../../../src/emulator/index.js';
import { verifySignature } from '../../../src/emulator/services/webhooks.js';
import {
  createTenant,
  startEmulator,
  type CallOptions,
  type HttpResult,
  type TestEmulator,
  sharedEmulator,
  createApplication as application,
  createToken,
  unique,
} from '../../helpers/emulator.js';
import { tempDir } from '../../helpers/temp.js';
import { eventually, sleep } from '../../helpers/wait.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2099, cvc: '123' };
const WEBHOOKS = { attempts: 3, retryBaseMs: 50, attemptTimeoutMs: 300 };
const OPTIONS: EmulatorOptions = { inMemory: true, syncTimeoutMs: 1500, webhooks: WEBHOOKS };

/** Reactor source, one argument per line (so that tests know the line numbers). */
const source = (...lines: string[]) => `${lines.join('\n')}\n`;

/** Returns what it was given: args, configuration, and whether `req.svc` is a client. */
const ECHO = source(
  'module.exports = async function (req) {',
  '  return { raw: { args: req.args, configuration: req.configuration, svc: req.svc === null ? null : typeof req.svc } };',
  '};',
);

async function createReactor(
  emu: TestEmulator,
  body: { name?: string; code?: string; configuration?: Record<string, string>; application?: { id: string } | null },
): Promise<Reactor> {
  const created = await emu.call<Reactor>('POST', '/reactors', {
    body: { name: unique('reactor'), code: ECHO, configuration: {}, ...body },
  });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

/** POST /reactors/{id}/react, with the private key unless told otherwise. */
function invoke(emu: TestEmulator, id: string, body: unknown = {}, options: CallOptions = {}): Promise<HttpResult> {
  return emu.call('POST', `/reactors/${id}/react`, { key: emu.privateKey, body, ...options });
}

function patch(emu: TestEmulator, id: string, value: unknown, options: CallOptions = {}): Promise<HttpResult> {
  return emu.call('PATCH', `/reactors/${id}`, {
    raw: JSON.stringify(value),
    contentType: 'application/merge-patch+json',
    ...options,
  });
}

function expectProblem(result: HttpResult, status: number, detail?: RegExp | string): void {
  expect(result.status, result.text).toBe(status);
  expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(result.body.status).toBe(status);
  expect(typeof result.body.title).toBe('string');
  if (typeof detail === 'string') expect(result.body.detail).toBe(detail);
  else if (detail) expect(result.body.detail).toMatch(detail);
}

interface Delivery {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A real webhook receiver on a loopback port. `answer(n)` decides the n-th request's fate (1-based):
 * an HTTP status, or 'hang' to hold the request open without ever answering.
 */
async function receiver(answer: (n: number) => number | 'hang' = () => 200) {
  const received: Delivery[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      received.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      const action = answer(received.length);
      if (action === 'hang') return;
      response.writeHead(action, { 'content-type': 'text/plain' });
      response.end(action < 300 ? 'thanks' : 'try again');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/reactor?source=svc`;
  return {
    url,
    received,
    /** Waits until `count` requests have arrived. */
    async waitFor(count: number, timeoutMs = 5000): Promise<Delivery[]> {
      return eventually(() => {
        if (received.length < count) throw new Error(`the receiver got ${received.length} of ${count} requests`);
        return received;
      }, timeoutMs);
    },
  };
}

function webhookEvents(emu: TestEmulator, requestId: string) {
  return emu.events.filter(
    (event): event is Extract<EmulatorEvent, { type: 'webhook' }> =>
      event.type === 'webhook' && event.requestId === requestId,
  );
}

function invocationEvents(emu: TestEmulator, requestId: string) {
  return emu.events.filter(
    (event): event is Extract<EmulatorEvent, { type: 'invocation' }> =>
      event.type === 'invocation' && event.requestId === requestId,
  );
}

function traceId(result: HttpResult): string {
  const id = result.headers['svc-trace-id'];
  expect(typeof id).toBe('string');
  return id as string;
}

describe('reactor CRUD (spec 4.4)', () => {
  const emu = sharedEmulator(OPTIONS);

  it('creates a reactor: 201 with the Reactor, application null when none is set, readable by GET', async () => {
    const self = await emu().call('GET', '/applications/key');
    expect(self.status).toBe(200);
    const name = unique('crud');
    const before = Date.now();
    const created = await emu().call<Reactor>('POST', '/reactors', {
      body: { name, code: ECHO, configuration: { region: 'eu', mode: 'test' } },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.headers['content-type']).toMatch(/^application\/json/);
    expect(created.body).toEqual({
      id: expect.stringMatching(UUID),
      tenant_id: emu().tenantId,
      name,
      code: ECHO,
      configuration: { region: 'eu', mode: 'test' },
      application: null,
      created_by: self.body.id,
      created_at: expect.any(String),
      modified_by: self.body.id,
      modified_at: expect.any(String),
    });
    const createdAt = Date.parse(created.body.created_at!);
    expect(createdAt).toBeGreaterThanOrEqual(before - 1000);
    expect(createdAt).toBeLessThanOrEqual(Date.now() + 1000);
    expect(created.body.modified_at).toBe(created.body.created_at);

    const got = await emu().call<Reactor>('GET', `/reactors/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);
    // An upper-case id names the same reactor.
    expect((await emu().call('GET', `/reactors/${created.body.id.toUpperCase()}`)).body.id).toBe(created.body.id);
  });

  it('returns a bound public or private Application as the Application object, without its key', async () => {
    for (const type of ['private', 'public'] as const) {
      const app = await application(emu(), { type, permissions: ['token:create'] });
      const appView = await emu().call('GET', `/applications/${app.id}`);
      expect(appView.status).toBe(200);
      const created = await createReactor(emu(), { application: { id: app.id } });
      expect(created.application, type).toEqual(appView.body);
      expect(created.application, type).toMatchObject({
        id: app.id,
        type,
        tenant_id: emu().tenantId,
        permissions: ['token:create'],
      });
      expect(created.application, type).not.toHaveProperty('key');
      const got = await emu().call<Reactor>('GET', `/reactors/${created.id}`);
      expect(got.body.application, type).toEqual(appView.body);
      expect(got.text, type).not.toContain(app.key);
      const listed = await emu().call<Page<Reactor>>('GET', `/reactors?id=${created.id}`);
      expect(listed.body.data[0]!.application, type).toEqual(appView.body);
      expect(listed.text, type).not.toContain(app.key);
    }
  });

  it('lists with the id (repeatable) and name (wildcard, case-insensitive) filters, page and size', async () => {
    const tag = randomBytes(4).toString('hex');
    const a = await createReactor(emu(), { name: `list-${tag}-alpha` });
    const b = await createReactor(emu(), { name: `LIST-${tag}-Beta` });
    const c = await createReactor(emu(), { name: `list-${tag}-gamma` });
    const other = await createReactor(emu(), { name: `other-${tag}` });

    const all = await emu().call<Page<Reactor>>('GET', '/reactors?size=100');
    expect(all.status).toBe(200);
    expect(all.body.data.map((r) => r.id)).toEqual(expect.arrayContaining([a.id, b.id, c.id, other.id]));
    expect(all.body.data.every((r) => r.tenant_id === emu().tenantId)).toBe(true);

    const byIds = await emu().call<Page<Reactor>>('GET', `/reactors?id=${a.id}&id=${c.id.toUpperCase()}`);
    expect(byIds.status).toBe(200);
    expect(byIds.body.data.map((r) => r.id).sort()).toEqual([a.id, c.id].sort());
    expect(byIds.body.pagination.total_items).toBe(2);
    expect(byIds.body.data.find((r) => r.id === a.id)).toEqual(a);

    const oneId = await emu().call<Page<Reactor>>('GET', `/reactors?id=${b.id}`);
    expect(oneId.body.data.map((r) => r.id)).toEqual([b.id]);

    const byName = await emu().call<Page<Reactor>>('GET', `/reactors?name=list-${tag}-*`);
    expect(byName.body.data.map((r) => r.id).sort()).toEqual([a.id, b.id, c.id].sort());
    const upper = await emu().call<Page<Reactor>>(
      'GET',
      `/reactors?name=${encodeURIComponent(`*${tag.toUpperCase()}-BETA`)}`,
    );
    expect(upper.body.data.map((r) => r.id)).toEqual([b.id]);
    const exact = await emu().call<Page<Reactor>>('GET', `/reactors?name=list-${tag}-gamma`);
    expect(exact.body.data.map((r) => r.id)).toEqual([c.id]);
    // No wildcard: the whole name must match, not a part of it.
    expect((await emu().call<Page<Reactor>>('GET', `/reactors?name=${tag}`)).body.data).toEqual([]);
    const both = await emu().call<Page<Reactor>>('GET', `/reactors?name=list-${tag}-*&id=${a.id}&id=${other.id}`);
    expect(both.body.data.map((r) => r.id)).toEqual([a.id]);

    const pages: string[] = [];
    for (const page of [1, 2]) {
      const listed = await emu().call<Page<Reactor>>('GET', `/reactors?name=list-${tag}-*&size=2&page=${page}`);
      expect(listed.status).toBe(200);
      expect(listed.body.pagination).toEqual({ total_items: 3, page_number: page, page_size: 2, total_pages: 2 });
      expect(listed.body.data).toHaveLength(page === 1 ? 2 : 1);
      pages.push(...listed.body.data.map((r) => r.id));
    }
    expect(pages.sort()).toEqual([a.id, b.id, c.id].sort());
    const past = await emu().call<Page<Reactor>>('GET', `/reactors?name=list-${tag}-*&size=2&page=3`);
    expect(past.body.data).toEqual([]);
    expect(past.body.pagination.total_items).toBe(3);

    for (const query of ['size=0', 'size=101', 'page=0', 'page=x', 'id=not-a-uuid']) {
      expectProblem(await emu().call('GET', `/reactors?${query}`), 400);
    }
  });

  it('PUT replaces every field and answers the updated Reactor', async () => {
    const app = await application(emu(), { type: 'private', permissions: ['token:create'] });
    const original = await createReactor(emu(), { configuration: { keep: 'no', b: '2' }, application: { id: app.id } });
    const newCode = source(
      'module.exports = async function (req) {',
      "  return { raw: { version: 2, configuration: req.configuration, svc: req.svc === null ? null : 'client' } };",
      '};',
    );
    const name = unique('replaced');
    await sleep(5);
    const updated = await emu().call<Reactor>('PUT', `/reactors/${original.id}`, {
      body: { name, code: newCode, configuration: { c: '3' } },
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toEqual({
      ...original,
      name,
      code: newCode,
      configuration: { c: '3' },
      application: null,
      modified_at: expect.any(String),
    });
    expect(Date.parse(updated.body.modified_at!)).toBeGreaterThan(Date.parse(original.modified_at!));
    expect((await emu().call('GET', `/reactors/${original.id}`)).body).toEqual(updated.body);
    const invoked = await invoke(emu(), original.id, { args: {} });
    expect(invoked.status, invoked.text).toBe(200);
    expect(invoked.body).toEqual({ raw: { version: 2, configuration: { c: '3' }, svc: null } });

    // PUT replaces: without configuration it is incomplete.
    const noConfiguration = await emu().call('PUT', `/reactors/${original.id}`, { body: { name, code: newCode } });
    expectProblem(noConfiguration, 400);
    expect(noConfiguration.body.errors).toEqual({ configuration: ['is required'] });
    const noName = await emu().call('PUT', `/reactors/${original.id}`, { body: { code: newCode, configuration: {} } });
    expectProblem(noName, 400);
    expect(noName.body.errors).toEqual({ name: ['is required'] });
    expect((await emu().call('GET', `/reactors/${original.id}`)).body).toEqual(updated.body);

    // And PUT can bind an Application again.
    const rebound = await emu().call<Reactor>('PUT', `/reactors/${original.id}`, {
      body: { name, code: newCode, configuration: {}, application: { id: app.id } },
    });
    expect(rebound.status).toBe(200);
    expect(rebound.body.application).toMatchObject({ id: app.id });
    expect((await invoke(emu(), original.id)).body.raw.svc).toBe('client');
  });

  it('DELETE answers 204, then the reactor is gone everywhere (404)', async () => {
    const reactor = await createReactor(emu(), {});
    expect((await invoke(emu(), reactor.id)).status).toBe(200);
    const deleted = await emu().call('DELETE', `/reactors/${reactor.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectProblem(await emu().call('GET', `/reactors/${reactor.id}`), 404, new RegExp(reactor.id));
    expectProblem(await emu().call('DELETE', `/reactors/${reactor.id}`), 404);
    expectProblem(
      await emu().call('PUT', `/reactors/${reactor.id}`, { body: { name: 'x', code: ECHO, configuration: {} } }),
      404,
    );
    expectProblem(await patch(emu(), reactor.id, { name: 'x' }), 404);
    expectProblem(await invoke(emu(), reactor.id), 404);
    const listed = await emu().call<Page<Reactor>>('GET', `/reactors?id=${reactor.id}`);
    expect(listed.body.data).toEqual([]);
  });

  it('answers 404 for an unknown id on every endpoint and 400 for an id that is not a UUID', async () => {
    const calls: [string, string, CallOptions][] = [
      ['GET', `/reactors/${UNKNOWN}`, {}],
      ['PUT', `/reactors/${UNKNOWN}`, { body: { name: 'x', code: ECHO, configuration: {} } }],
      ['PATCH', `/reactors/${UNKNOWN}`, { raw: '{"name":"x"}', contentType: 'application/merge-patch+json' }],
      ['DELETE', `/reactors/${UNKNOWN}`, {}],
      ['POST', `/reactors/${UNKNOWN}/react`, { key: emu().privateKey, body: {} }],
      ['GET', `/reactors/${UNKNOWN}/results/${UNKNOWN}`, { key: emu().privateKey }],
    ];
    for (const [method, path, options] of calls) {
      expectProblem(await emu().call(method, path, options), 404);
      expectProblem(await emu().call(method, path.replace(UNKNOWN, 'not-a-uuid'), options), 400);
    }
  });
});

describe('reactor validation', () => {
  const emu = sharedEmulator(OPTIONS);

  it('requires name, code and configuration', async () => {
    const name = unique('required');
    const full = { name, code: ECHO, configuration: {} };
    for (const field of ['name', 'code', 'configuration'] as const) {
      const { [field]: _omitted, ...body } = full;
      const result = await emu().call('POST', '/reactors', { body });
      expectProblem(result, 400);
      expect(result.body.errors, field).toEqual({ [field]: ['is required'] });
    }
    expectProblem(await emu().call('POST', '/reactors', { body: {} }), 400);
    expectProblem(await emu().call('POST', '/reactors', { body: { ...full, code: '' } }), 400);
    expectProblem(await emu().call('POST', '/reactors', { body: { ...full, name: '' } }), 400);
    expectProblem(await emu().call('POST', '/reactors', { body: [full] }), 400);
    expectProblem(await emu().call('POST', '/reactors', { raw: '{"name": ', contentType: 'application/json' }), 400);
    expect((await emu().call<Page<Reactor>>('GET', `/reactors?name=${name}`)).body.data).toEqual([]);
  });

  it('takes a name of up to 200 characters', async () => {
    const longest = `${'n'.repeat(199)}x`;
    const ok = await emu().call<Reactor>('POST', '/reactors', {
      body: { name: longest, code: ECHO, configuration: {} },
    });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.name).toBe(longest);
    const tooLong = await emu().call('POST', '/reactors', {
      body: { name: `${longest}y`, code: ECHO, configuration: {} },
    });
    expectProblem(tooLong, 400);
    expect(tooLong.body.errors).toEqual({ name: ['must be at most 200 characters'] });
    const put = await emu().call('PUT', `/reactors/${ok.body.id}`, {
      body: { name: `${longest}y`, code: ECHO, configuration: {} },
    });
    expectProblem(put, 400);
    expect(put.body.errors.name).toEqual(['must be at most 200 characters']);
    expect((await emu().call('GET', `/reactors/${ok.body.id}`)).body.name).toBe(longest);
  });

  it('takes configuration values that are strings only', async () => {
    const name = unique('configuration');
    for (const configuration of [{ n: 1 }, { o: { nested: 'x' } }, { b: true }, { z: null }, { l: ['a'] }]) {
      const result = await emu().call('POST', '/reactors', { body: { name, code: ECHO, configuration } });
      expectProblem(result, 400);
      expect(result.body.errors, JSON.stringify(configuration)).toEqual({
        [`configuration.${Object.keys(configuration)[0]}`]: ['must be a string'],
      });
    }
    for (const configuration of [['a'], 'a=b', null]) {
      const result = await emu().call('POST', '/reactors', { body: { name, code: ECHO, configuration } });
      expectProblem(result, 400);
      expect(Object.keys(result.body.errors), JSON.stringify(configuration)).toEqual(['configuration']);
    }
    expect((await emu().call<Page<Reactor>>('GET', `/reactors?name=${name}`)).body.data).toEqual([]);
    const ok = await createReactor(emu(), { configuration: { empty: '', spaced: 'a b', unicode: 'ü' } });
    expect(ok.configuration).toEqual({ empty: '', spaced: 'a b', unicode: 'ü' });
  });

  it('refuses an unknown field', async () => {
    const body = { name: unique('unknown'), code: ECHO, configuration: {} };
    const extra = await emu().call('POST', '/reactors', { body: { ...body, extra: 1 } });
    expectProblem(extra, 400);
    expect(extra.body.errors).toEqual({ extra: ['is not a known field'] });
    const app = await application(emu(), { type: 'private', permissions: ['token:use'] });
    const nested = await emu().call('POST', '/reactors', { body: { ...body, application: { id: app.id, name: 'x' } } });
    expectProblem(nested, 400);
    expect(nested.body.errors['application.name']).toEqual(['is not a known field']);
    const reactor = await createReactor(emu(), {});
    expectProblem(await emu().call('PUT', `/reactors/${reactor.id}`, { body: { ...body, id: reactor.id } }), 400);
    expectProblem(await emu().call('PUT', `/reactors/${reactor.id}`, { body: { ...body, tenant_id: UNKNOWN } }), 400);
    expect((await emu().call('GET', `/reactors/${reactor.id}`)).body).toEqual(reactor);
  });

  it('binds only a public or private Application of the tenant', async () => {
    const self = (await emu().call('GET', '/applications/key')).body;
    const otherManagement = await application(emu(), { type: 'management', permissions: ['reactor:read'] });
    const other = await createTenant(emu());
    const theirs = (await emu().call('GET', '/applications', { key: other.management_key })).body.data as {
      id: string;
      type: string;
    }[];
    const theirPrivate = theirs.find((app) => app.type === 'private')!;
    expect(theirPrivate).toBeDefined();
    const reactor = await createReactor(emu(), {});

    for (const [label, id] of [
      ['the caller itself (management)', self.id],
      ['another management Application', otherManagement.id],
      ['an unknown id', UNKNOWN],
      ["another tenant's private Application", theirPrivate.id],
    ] as const) {
      const created = await emu().call('POST', '/reactors', {
        body: { name: unique('bind'), code: ECHO, configuration: {}, application: { id } },
      });
      expectProblem(created, 400);
      expect(Object.keys(created.body.errors), label).toEqual(['application.id']);
      const put = await emu().call('PUT', `/reactors/${reactor.id}`, {
        body: { name: reactor.name, code: ECHO, configuration: {}, application: { id } },
      });
      expectProblem(put, 400);
      expect(Object.keys(put.body.errors), label).toEqual(['application.id']);
    }
    expect(
      (
        await emu().call('POST', '/reactors', {
          body: { name: 'x', code: ECHO, configuration: {}, application: { id: 'not-a-uuid' } },
        })
      ).status,
    ).toBe(400);
    expect(
      (await emu().call('POST', '/reactors', { body: { name: 'x', code: ECHO, configuration: {}, application: {} } }))
        .status,
    ).toBe(400);
    expect(
      (await emu().call('POST', '/reactors', { body: { name: 'x', code: ECHO, configuration: {}, application: 'x' } }))
        .status,
    ).toBe(400);
    expect((await emu().call('GET', `/reactors/${reactor.id}`)).body.application).toBeNull();
    // `application: null` is the same as none.
    expect((await createReactor(emu(), { application: null })).application).toBeNull();
  });
});

describe('reactor permissions', () => {
  const emu = sharedEmulator(OPTIONS);
  const ALL = ['reactor:create', 'reactor:read', 'reactor:update', 'reactor:delete'];

  it('answers 401 without a key or with an unknown one', async () => {
    const reactor = await createReactor(emu(), {});
    for (const key of [null, 'key_local_mgt_notarealkeyatall0000000']) {
      for (const [method, path, options] of [
        ['POST', '/reactors', { body: { name: 'x', code: ECHO, configuration: {} } }],
        ['GET', '/reactors', {}],
        ['GET', `/reactors/${reactor.id}`, {}],
        ['PUT', `/reactors/${reactor.id}`, { body: { name: 'x', code: ECHO, configuration: {} } }],
        ['PATCH', `/reactors/${reactor.id}`, { raw: '{"name":"x"}', contentType: 'application/merge-patch+json' }],
        ['DELETE', `/reactors/${reactor.id}`, {}],
        ['POST', `/reactors/${reactor.id}/react`, { body: {} }],
      ] as [string, string, CallOptions][]) {
        expectProblem(await emu().call(method, path, { ...options, key }), 401);
      }
    }
    expect((await emu().call('GET', `/reactors/${reactor.id}`)).body).toEqual(reactor);
  });

  it('needs reactor:create, reactor:read, reactor:update and reactor:delete for each operation', async () => {
    for (const missing of ALL) {
      const app = await application(emu(), { type: 'management', permissions: ALL.filter((p) => p !== missing) });
      const as = { key: app.key };
      /** 403 naming the permission when it is the one missing, else the success status. */
      const expectStatus = (result: HttpResult, permission: string, success: number, label: string) => {
        if (permission === missing) expectProblem(result, 403, new RegExp(missing));
        else expect(result.status, `without ${missing}: ${label}: ${result.text}`).toBe(success);
      };
      const reactor = await createReactor(emu(), {});

      expectStatus(
        await emu().call('POST', '/reactors', { ...as, body: { name: unique('perm'), code: ECHO, configuration: {} } }),
        'reactor:create',
        201,
        'create',
      );
      expectStatus(await emu().call('GET', '/reactors', as), 'reactor:read', 200, 'list');
      expectStatus(await emu().call('GET', `/reactors/${reactor.id}`, as), 'reactor:read', 200, 'get');
      const put = await emu().call('PUT', `/reactors/${reactor.id}`, {
        ...as,
        body: { name: reactor.name, code: ECHO, configuration: { by: 'put' } },
      });
      expectStatus(put, 'reactor:update', 200, 'put');
      expectStatus(
        await patch(emu(), reactor.id, { configuration: { by: 'patch' } }, as),
        'reactor:update',
        204,
        'patch',
      );
      const configuration = (await emu().call('GET', `/reactors/${reactor.id}`)).body.configuration;
      expect(configuration).toEqual(missing === 'reactor:update' ? {} : { by: 'patch' });
      expectStatus(await emu().call('DELETE', `/reactors/${reactor.id}`, as), 'reactor:delete', 204, 'delete');
      expect((await emu().call('GET', `/reactors/${reactor.id}`)).status).toBe(
        missing === 'reactor:delete' ? 200 : 404,
      );
    }
  });

  it('does not let the private key manage reactors, nor a management key without reactor permissions', async () => {
    const reactor = await createReactor(emu(), {});
    const appsOnly = await application(emu(), { type: 'management', permissions: ['application:read'] });
    for (const key of [emu().privateKey, appsOnly.key]) {
      for (const [method, path, options, permission] of [
        ['POST', '/reactors', { body: { name: 'x', code: ECHO, configuration: {} } }, 'reactor:create'],
        ['GET', '/reactors', {}, 'reactor:read'],
        ['GET', `/reactors/${reactor.id}`, {}, 'reactor:read'],
        ['PUT', `/reactors/${reactor.id}`, { body: { name: 'x', code: ECHO, configuration: {} } }, 'reactor:update'],
        [
          'PATCH',
          `/reactors/${reactor.id}`,
          { raw: '{"name":"x"}', contentType: 'application/merge-patch+json' },
          'reactor:update',
        ],
        ['DELETE', `/reactors/${reactor.id}`, {}, 'reactor:delete'],
      ] as [string, string, CallOptions, string][]) {
        expectProblem(await emu().call(method, path, { ...options, key }), 403, new RegExp(permission));
      }
    }
    expect((await emu().call('GET', `/reactors/${reactor.id}`)).body).toEqual(reactor);
    // The private key is the one that invokes.
    expect((await invoke(emu(), reactor.id)).status).toBe(200);
  });
});

describe('code that does not load', () => {
  const emu = sharedEmulator(OPTIONS);

  it('refuses a syntax error on create with 422 and the line and column', async () => {
    const name = unique('syntax');
    const code = source('module.exports = async function (req) {', '  return { raw: ; };', '};');
    const result = await emu().call('POST', '/reactors', { body: { name, code, configuration: {} } });
    expectProblem(result, 422);
    expect(result.body.title).toBe('Code does not load');
    expect(result.body.detail).toMatch(new RegExp(`^${name}\\.js:2:17: SyntaxError: Unexpected token`));
    // The offending line and a caret under the column.
    expect(result.body.detail).toContain('  return { raw: ; };\n                ^');
    expect((await emu().call<Page<Reactor>>('GET', `/reactors?name=${name}`)).body.data).toEqual([]);
  });

  it('refuses a module that does not export a function, and one that throws while loading', async () => {
    const name = unique('noexport');
    const notAFunction = await emu().call('POST', '/reactors', {
      body: { name, code: 'module.exports = { handler: async () => ({}) };', configuration: {} },
    });
    expectProblem(notAFunction, 422);
    expect(notAFunction.body.detail).toContain(`${name}.js must export a function`);
    expect(notAFunction.body.detail).toContain('an object with handler');
    const nothing = await emu().call('POST', '/reactors', {
      body: { name, code: '// nothing exported\nconst x = 1;\n', configuration: {} },
    });
    expectProblem(nothing, 422, /must export a function/);
    const throws = await emu().call('POST', '/reactors', {
      body: { name, code: source('// line 1', '', 'throw new Error("boom at load");'), configuration: {} },
    });
    expectProblem(throws, 422, `${name}.js:3:7: Error: boom at load`);
    const requires = await emu().call('POST', '/reactors', {
      body: { name, code: "const fs = require('fs');\nmodule.exports = async () => ({});", configuration: {} },
    });
    expectProblem(requires, 422, /Cannot require "fs"/);
    expect((await emu().call<Page<Reactor>>('GET', `/reactors?name=${name}`)).body.data).toEqual([]);
  });

  it('refuses code that does not load on update, and the old code keeps serving', async () => {
    const oldCode = source('module.exports = async function (req) {', "  return { raw: { version: 'old' } };", '};');
    const reactor = await createReactor(emu(), { code: oldCode, configuration: { a: '1' } });
    expect((await invoke(emu(), reactor.id)).body).toEqual({ raw: { version: 'old' } });

    const newName = unique('renamed');
    const bad = source('module.exports = async function (req) {', "  return { raw: { version: 'new' } ;", '};');
    const put = await emu().call('PUT', `/reactors/${reactor.id}`, {
      body: { name: newName, code: bad, configuration: { a: '2' } },
    });
    expectProblem(put, 422, new RegExp(`^${newName}\\.js:2:\\d+: SyntaxError`));
    const patched = await patch(emu(), reactor.id, { code: 'module.exports = 42;' });
    expectProblem(patched, 422, /must export a function.*\(it exports a number\)/);

    expect((await emu().call('GET', `/reactors/${reactor.id}`)).body).toEqual(reactor);
    const invoked = await invoke(emu(), reactor.id);
    expect(invoked.status).toBe(200);
    expect(invoked.body).toEqual({ raw: { version: 'old' } });
  });
});

describe('PATCH /reactors/{id} (merge patch)', () => {
  const emu = sharedEmulator(OPTIONS);

  it('answers 204 and changes only the given fields; configuration keys merge and null removes one', async () => {
    const app = await application(emu(), { type: 'private', permissions: ['token:create'] });
    const reactor = await createReactor(emu(), {
      configuration: { a: '1', b: '2', c: '3' },
      application: { id: app.id },
    });
    await sleep(5);
    const result = await patch(emu(), reactor.id, { configuration: { b: 'B', c: null, d: '4' } });
    expect(result.status, result.text).toBe(204);
    expect(result.text).toBe('');
    const got = await emu().call<Reactor>('GET', `/reactors/${reactor.id}`);
    expect(got.body).toEqual({
      ...reactor,
      configuration: { a: '1', b: 'B', d: '4' },
      modified_at: expect.any(String),
    });
    expect(Date.parse(got.body.modified_at!)).toBeGreaterThan(Date.parse(reactor.modified_at!));
    expect((await invoke(emu(), reactor.id)).body.raw.configuration).toEqual({ a: '1', b: 'B', d: '4' });

    // A name alone; a charset parameter on the media type is fine.
    const name = unique('patched');
    expect(
      (await patch(emu(), reactor.id, { name }, { contentType: 'application/merge-patch+json; charset=utf-8' })).status,
    ).toBe(204);
    expect((await emu().call('GET', `/reactors/${reactor.id}`)).body).toEqual({
      ...got.body,
      name,
      modified_at: expect.any(String),
    });
    // An empty patch changes nothing but is fine.
    expect((await patch(emu(), reactor.id, {})).status).toBe(204);
    expect((await emu().call('GET', `/reactors/${reactor.id}`)).body).toMatchObject({
      name,
      configuration: { a: '1', b: 'B', d: '4' },
      code: ECHO,
    });
  });

  it('swaps in patched code, which then serves invocations', async () => {
    const reactor = await createReactor(emu(), { configuration: { x: 'y' } });
    const code = source(
      'module.exports = async function (req) {',
      '  return { raw: { patched: true, x: req.configuration.x } };',
      '};',
    );
    expect((await patch(emu(), reactor.id, { code })).status).toBe(204);
    const got = await emu().call<Reactor>('GET', `/reactors/${reactor.id}`);
    expect(got.body.code).toBe(code);
    expect(got.body.name).toBe(reactor.name);
    expect((await invoke(emu(), reactor.id)).body).toEqual({ raw: { patched: true, x: 'y' } });
  });

  it('binds an Application with application {id} and unbinds it with application null', async () => {
    const app = await application(emu(), { type: 'private', permissions: ['token:create'] });
    const reactor = await createReactor(emu(), {});
    expect((await invoke(emu(), reactor.id)).body.raw.svc).toBeNull();
    expect((await patch(emu(), reactor.id, { application: { id: app.id } })).status).toBe(204);
    expect((await emu().call('GET', `/reactors/${reactor.id}`)).body.application).toMatchObject({
      id: app.id,
      type: 'private',
    });
    expect((await invoke(emu(), reactor.id)).body.raw.svc).toBe('object');
    expect((await patch(emu(), reactor.id, { application: null })).status).toBe(204);
    const got = await emu().call<Reactor>('GET', `/reactors/${reactor.id}`);
    expect(got.body.application).toBeNull();
    expect(got.body.configuration).toEqual({});
    expect((await invoke(emu(), reactor.id)).body.raw.svc).toBeNull();
  });

  it('answers 415 to any other content type and changes nothing', async () => {
    const reactor = await createReactor(emu(), {});
    const body = JSON.stringify({ name: 'changed' });
    for (const [label, options] of [
      ['application/json', { raw: body, contentType: 'application/json' }],
      ['text/plain', { raw: body, contentType: 'text/plain' }],
      ['application/json-patch+json', { raw: body, contentType: 'application/json-patch+json' }],
      ['no content type', { raw: body }],
      ['no body', {}],
    ] as [string, CallOptions][]) {
      const result = await emu().call('PATCH', `/reactors/${reactor.id}`, options);
      expectProblem(result, 415);
      expect(result.status, label).toBe(415);
    }
    expect((await emu().call('GET', `/reactors/${reactor.id}`)).body).toEqual(reactor);
  });

  it('refuses a patch whose result is invalid and changes nothing', async () => {
    const app = await application(emu(), { type: 'private', permissions: ['token:create'] });
    const reactor = await createReactor(emu(), { configuration: { a: '1' }, application: { id: app.id } });
    const management = (await emu().call('GET', '/applications/key')).body;
    const cases: [string, unknown, number][] = [
      ['name too long', { name: 'n'.repeat(201) }, 400],
      ['name removed', { name: null }, 400],
      ['code removed', { code: null }, 400],
      ['configuration removed', { configuration: null }, 400],
      ['configuration value not a string', { configuration: { b: 2 } }, 400],
      ['unknown field', { colour: 'red' }, 400],
      ['empty code', { code: '' }, 400],
      ['management Application', { application: { id: management.id } }, 400],
      ['unknown Application', { application: { id: UNKNOWN } }, 400],
      ['not an object', ['name', 'x'], 400],
      ['a string', 'x', 400],
      ['code with a syntax error', { name: 'would-rename', code: 'module.exports = async (req) => {' }, 422],
      ['code that exports no function', { code: 'module.exports = "nope";' }, 422],
    ];
    for (const [label, value, status] of cases) {
      const result = await patch(emu(), reactor.id, value);
      expect(result.status, `${label}: ${result.text}`).toBe(status);
      expect(result.headers['content-type'], label).toMatch(/^application\/problem\+json/);
    }
    expectProblem(
      await emu().call('PATCH', `/reactors/${reactor.id}`, {
        raw: '{"name": ',
        contentType: 'application/merge-patch+json',
      }),
      400,
    );
    expect((await emu().call('GET', `/reactors/${reactor.id}`)).body).toEqual(reactor);
    expect((await invoke(emu(), reactor.id)).body.raw.configuration).toEqual({ a: '1' });
  });
});

describe('POST /reactors/{id}/react', () => {
  const emu = sharedEmulator(OPTIONS);

  it('needs token:use: the management key and a public key get 403, the private key works', async () => {
    const reactor = await createReactor(emu(), {});
    expectProblem(await invoke(emu(), reactor.id, {}, { key: emu().managementKey }), 403, /token:use/);
    const pub = await application(emu(), { type: 'public', permissions: ['token:create'] });
    expectProblem(await invoke(emu(), reactor.id, {}, { key: pub.key }), 403, /token:use/);
    const privateWithoutUse = await application(emu(), {
      type: 'private',
      permissions: ['token:create', 'token:read'],
    });
    expectProblem(await invoke(emu(), reactor.id, {}, { key: privateWithoutUse.key }), 403, /token:use/);
    expectProblem(await invoke(emu(), reactor.id, {}, { key: null }), 401);
    const ok = await invoke(emu(), reactor.id, { args: { hello: 'world' } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toEqual({ raw: { args: { hello: 'world' }, configuration: {}, svc: null } });
  });

  it('runs with empty args when none are given, and checks the body', async () => {
    const reactor = await createReactor(emu(), {});
    for (const options of [{}, { body: {} }, { body: { args: null } }, { body: null }] as CallOptions[]) {
      const result = await emu().call('POST', `/reactors/${reactor.id}/react`, { key: emu().privateKey, ...options });
      expect(result.status, `${JSON.stringify(options)}: ${result.text}`).toBe(200);
      expect(result.body.raw.args, JSON.stringify(options)).toEqual({});
    }
    for (const body of [{ args: ['a'] }, { args: 'text' }, { args: 1 }, { argz: {} }, ['x']]) {
      expectProblem(await invoke(emu(), reactor.id, body), 400);
    }
  });

  it('passes configuration to the code, and req.svc is null without an Application', async () => {
    const reactor = await createReactor(emu(), { configuration: { api_base: 'https://example.test', retries: '3' } });
    const result = await invoke(emu(), reactor.id, { args: { n: 1, nested: { list: [1, 'two', null] } } });
    expect(result.status).toBe(200);
    expect(result.body).toEqual({
      raw: {
        args: { n: 1, nested: { list: [1, 'two', null] } },
        configuration: { api_base: 'https://example.test', retries: '3' },
        svc: null,
      },
    });
  });

  it('detokenizes args, card data included: a whole expression becomes the object, an embedded one its JSON text', async () => {
    const card = await createToken(emu(), { type: 'card', data: CARD });
    const plain = await createToken(emu(), { type: 'token', data: 'general secret' });
    const structured = await createToken(emu(), { type: 'token', data: { deep: [1, 2] } });
    const code = source(
      'module.exports = async function (req) {',
      '  const { card, note, plain, list } = req.args;',
      '  return { raw: {',
      '    cardType: typeof card,',
      '    card,',
      '    last4: card.number.slice(-4),',
      '    note,',
      "    noteCard: JSON.parse(note.slice('card ending '.length)),",
      '    plain,',
      '    list,',
      '  } };',
      '};',
    );
    const reactor = await createReactor(emu(), { code });
    const result = await invoke(emu(), reactor.id, {
      args: {
        card: `{{ ${card.id} }}`,
        note: `card ending {{ ${card.id} }}`,
        plain: `{{${plain.id}}}`,
        list: [`x{{ ${plain.id} }}x`, `{{ ${structured.id} }}`, 'untouched {{ not closed'],
      },
    });
    expect(result.status, result.text).toBe(200);
    expect(result.body.raw).toEqual({
      cardType: 'object',
      card: CARD,
      last4: '4242',
      note: `card ending ${JSON.stringify(CARD)}`,
      noteCard: CARD,
      plain: 'general secret',
      list: ['xgeneral secretx', { deep: [1, 2] }, 'untouched {{ not closed'],
    });
  });

  it('checks token:use per container: an Application allowed only on /general/ gets 403 for a card token', async () => {
    const card = await createToken(emu(), { type: 'card', data: CARD });
    const plain = await createToken(emu(), { type: 'token', data: 'general secret' });
    const generalOnly = await application(emu(), {
      type: 'private',
      rules: [{ priority: 1, container: '/general/', transform: 'reveal', permissions: ['token:use'] }],
    });
    const reactor = await createReactor(emu(), {});
    const refused = await invoke(emu(), reactor.id, { args: { card: `{{ ${card.id} }}` } }, { key: generalOnly.key });
    expectProblem(refused, 403);
    expect(refused.text).not.toContain('4242424242424242');
    const allowed = await invoke(emu(), reactor.id, { args: { plain: `{{ ${plain.id} }}` } }, { key: generalOnly.key });
    expect(allowed.status, allowed.text).toBe(200);
    expect(allowed.body.raw.args).toEqual({ plain: 'general secret' });
    // One forbidden token spoils the whole call.
    expectProblem(
      await invoke(
        emu(),
        reactor.id,
        { args: { plain: `{{ ${plain.id} }}`, card: `{{ ${card.id} }}` } },
        { key: generalOnly.key },
      ),
      403,
    );
  });

  it('answers 400 for an unknown token', async () => {
    const reactor = await createReactor(emu(), {});
    const result = await invoke(emu(), reactor.id, { args: { x: '{{ no-such-token-1 }}' } });
    expectProblem(result, 400, /no-such-token-1/);
  });

  it('detokenizes at most 100 distinct tokens per invocation', async () => {
    const tokenized = await emu().call('POST', '/tokenize', {
      key: emu().privateKey,
      body: Array.from({ length: 101 }, (_, i) => `value-${i}`),
    });
    expect(tokenized.status, tokenized.text).toBe(201);
    const ids = tokenized.body as string[];
    expect(new Set(ids).size).toBe(101);
    const reactor = await createReactor(emu(), {});
    const hundred = await invoke(emu(), reactor.id, {
      args: { list: ids.slice(0, 100).map((id) => `{{ ${id} }}`), again: `{{ ${ids[0]} }}` },
    });
    expect(hundred.status, hundred.text).toBe(200);
    expect(hundred.body.raw.args.list).toEqual(Array.from({ length: 100 }, (_, i) => `value-${i}`));
    const tooMany = await invoke(emu(), reactor.id, { args: { list: ids.map((id) => `{{ ${id} }}`) } });
    expectProblem(tooMany, 400, /100/);
    expect(tooMany.body.detail).toMatch(/101/);
  });

  it('returns raw as it is and the tokenize block as tokens that then exist', async () => {
    const code = source(
      'module.exports = async function (req) {',
      '  return {',
      "    raw: { greeting: 'hi ' + req.args.who, list: [1, { b: null }] },",
      '    tokenize: { secret: req.args.secret, card: { type: "card", data: req.args.card }, nested: { list: ["x", 42] }, empty: null },',
      '  };',
      '};',
    );
    const reactor = await createReactor(emu(), { code });
    const self = (await emu().call('GET', '/applications/key', { key: emu().managementKey })).body;
    const result = await invoke(emu(), reactor.id, { args: { who: 'ada', secret: 's3cret', card: CARD } });
    expect(result.status, result.text).toBe(200);
    expect(Object.keys(result.body).sort()).toEqual(['raw', 'tokens']);
    expect(result.body.raw).toEqual({ greeting: 'hi ada', list: [1, { b: null }] });
    const tokens = result.body.tokens;
    expect(tokens).toEqual({
      secret: expect.stringMatching(UUID),
      card: expect.objectContaining({ id: expect.stringMatching(UUID), type: 'card', containers: ['/pci/high/'] }),
      nested: { list: [expect.stringMatching(UUID), expect.stringMatching(UUID)] },
      empty: null,
    });
    const secret = await emu().call('GET', `/tokens/${tokens.secret}`, { key: emu().privateKey });
    expect(secret.status).toBe(200);
    expect(secret.body).toMatchObject({ id: tokens.secret, type: 'token', containers: ['/general/high/'] });
    expect(secret.body.created_by).not.toBe(self.id);
    const cardToken = await emu().call('GET', `/tokens/${tokens.card.id}`, { key: emu().privateKey });
    expect(cardToken.status).toBe(200);
    expect(cardToken.body.data.number).toBe('XXXXXXXXXXXX4242');
    for (const id of tokens.nested.list)
      expect((await emu().call('GET', `/tokens/${id}`, { key: emu().privateKey })).status).toBe(200);
    // What was tokenized detokenizes back to the input.
    const back = await emu().call('POST', '/detokenize', {
      key: emu().privateKey,
      body: { s: `{{ ${tokens.secret} }}`, n: `{{ ${tokens.nested.list[1]} }}` },
    });
    expect(back.body).toEqual({ s: 's3cret', n: 42 });
  });

  it('answers {} for a result with neither raw nor tokenize, and 500 for a result that is not an object', async () => {
    const code = source(
      'module.exports = async function (req) {',
      '  switch (req.args.mode) {',
      "    case 'empty': return {};",
      "    case 'undefined': return undefined;",
      "    case 'null': return null;",
      "    case 'other': return { something: 'else' };",
      "    case 'string': return 'just text';",
      "    case 'number': return 42;",
      "    case 'array': return [{ raw: 1 }];",
      "    case 'boolean': return true;",
      "    case 'function': return { raw: { fn: () => 1, date: new Date(0) } };",
      '  }',
      '};',
    );
    const reactor = await createReactor(emu(), { code });
    for (const mode of ['empty', 'undefined', 'null', 'other']) {
      const result = await invoke(emu(), reactor.id, { args: { mode } });
      expect(result.status, `${mode}: ${result.text}`).toBe(200);
      expect(result.body, mode).toEqual({});
    }
    for (const mode of ['string', 'number', 'array', 'boolean']) {
      const result = await invoke(emu(), reactor.id, { args: { mode } });
      expectProblem(result, 500, /must return an object/);
    }
    // raw goes through JSON: a function is dropped, a date becomes its string.
    expect((await invoke(emu(), reactor.id, { args: { mode: 'function' } })).body).toEqual({
      raw: { date: '1970-01-01T00:00:00.000Z' },
    });
  });

  it("gives the code a req.svc client acting as the reactor's Application", async () => {
    const bound = await application(emu(), {
      type: 'private',
      permissions: ['token:create', 'token:read', 'token:use'],
    });
    const existing = await createToken(emu(), { type: 'token', data: { made: 'outside' } });
    const code = source(
      'module.exports = async function (req) {',
      '  const created = await req.svc.tokenize({ secret: req.args.secret, card: { type: "card", data: req.args.card } });',
      "  const back = await req.svc.detokenize({ again: '{{ ' + created.secret + ' }}', outside: '{{ ' + req.args.existing + ' }}' });",
      '  const read = await req.svc.tokens.retrieve(created.secret);',
      "  return { raw: { created, back, readId: read.id }, tokenize: { viaBlock: 'from the block' } };",
      '};',
    );
    const reactor = await createReactor(emu(), { code, application: { id: bound.id } });
    const result = await invoke(emu(), reactor.id, {
      args: { secret: 'made inside', card: CARD, existing: existing.id },
    });
    expect(result.status, result.text).toBe(200);
    const { created, back, readId } = result.body.raw;
    expect(created.secret).toMatch(UUID);
    expect(created.card).toMatchObject({ id: expect.stringMatching(UUID), type: 'card' });
    expect(back).toEqual({ again: 'made inside', outside: { made: 'outside' } });
    expect(readId).toBe(created.secret);
    const token = await emu().call('GET', `/tokens/${created.secret}`, { key: emu().privateKey });
    expect(token.status).toBe(200);
    expect(token.body.created_by).toBe(bound.id);
    // The tokenize block is written as the reactor's Application too.
    const viaBlock = await emu().call('GET', `/tokens/${result.body.tokens.viaBlock}`, { key: emu().privateKey });
    expect(viaBlock.status).toBe(200);
    expect(viaBlock.body.created_by).toBe(bound.id);
  });

  it('lets the code catch the SvcApiError of a req.svc call its Application may not make (status, the problem as data)', async () => {
    const bound = await application(emu(), { type: 'private', permissions: ['token:create'] });
    const plain = await createToken(emu(), { type: 'token', data: 'guarded' });
    const code = source(
      'module.exports = async function (req) {',
      '  try {',
      "    await req.svc.detokenize({ x: '{{ ' + req.args.id + ' }}' });",
      '    return { raw: { threw: false } };',
      '  } catch (error) {',
      '    if (req.args.rethrow) throw error;',
      '    return { raw: { threw: true, name: error.name, isApiError: error instanceof SvcApiError, isError: error instanceof Error, status: error.status, detail: error.data.detail } };',
      '  }',
      '};',
    );
    const reactor = await createReactor(emu(), { code, application: { id: bound.id } });
    const caught = await invoke(emu(), reactor.id, { args: { id: plain.id } });
    expect(caught.status, caught.text).toBe(200);
    expect(caught.body.raw).toEqual({
      threw: true,
      name: 'SvcApiError',
      isApiError: true,
      isError: true,
      status: 403,
      detail: expect.stringMatching(/token:use/),
    });
    expect(caught.text).not.toContain('guarded');
    // Not caught, it fails the invocation as any error that is not a platform error class (500).
    expectProblem(
      await invoke(emu(), reactor.id, { args: { id: plain.id, rethrow: true } }),
      500,
      /SvcApiError: Request failed with status code 403$/,
    );
  });

  it("a tokenize block its Application may not write: 403 naming that Application (not the caller's key), raw kept", async () => {
    const bound = await application(emu(), {
      name: unique('charger'),
      type: 'private',
      permissions: ['token:read', 'token:use'],
    });
    const code = source(
      'module.exports = async function (req) {',
      "  return { raw: { charge: 'ch_1', amount: req.args.amount }, tokenize: { card: { type: 'card', data: req.args.card } } };",
      '};',
    );
    const reactor = await createReactor(emu(), { name: unique('charge'), code, application: { id: bound.id } });
    const refused = await invoke(emu(), reactor.id, { args: { amount: 42, card: CARD } });
    expectProblem(refused, 403);
    expect(refused.body).toEqual({
      type: 'urn:svc:problem:tokenize-refused',
      title: 'Tokenize block refused',
      status: 403,
      detail:
        `Reactor ${reactor.name} ran, but the tokenize block of its result was refused: its Application ${bound.name} (private, ${bound.id}) ` +
        `lacks token:create. Grant that to ${bound.name}, or bind another Application. The raw result is kept in "raw".`,
      raw: { charge: 'ch_1', amount: 42 },
      // Issue 30: the refusal explained, of the bound Application's grants.
      explanation: expect.objectContaining({
        decision: 'denied',
        operation: 'token:create',
        application: { id: bound.id, name: bound.name, type: 'private' },
      }),
      trace_id: traceId(refused),
    });
    // The caller's own key may create tokens: the problem is not about it.
    expect(refused.body.detail).not.toMatch(/^This private Application/);

    // Asynchronous, the result and the webhook keep raw beside the error.
    const hook = await receiver();
    const accepted = await invoke(emu(), reactor.id, { args: { amount: 7, card: CARD }, callback_url: hook.url });
    expect(accepted.status, accepted.text).toBe(202);
    const [delivery] = await hook.waitFor(1, 8000);
    const payload = JSON.parse(delivery!.body);
    expect(payload).toMatchObject({
      status: 'failed',
      raw: { charge: 'ch_1', amount: 7 },
      error: { status: 403, title: 'Tokenize block refused' },
    });
    expect(payload.error).not.toHaveProperty('raw');
  });

  it('a tokenize block with invalid data, in a reactor without an Application: the fields under tokenize, raw kept', async () => {
    const code = source(
      'module.exports = async function (req) {',
      "  return { raw: { ok: true }, tokenize: { card: { type: 'card', data: { number: '4242424242424241', expiration_month: 12, expiration_year: 2099 } } } };",
      '};',
    );
    const reactor = await createReactor(emu(), { code });
    const refused = await invoke(emu(), reactor.id);
    expectProblem(
      refused,
      400,
      new RegExp(
        `^Reactor ${reactor.name} ran, but the tokenize block of its result was refused: under the calling Application \\(the reactor has none of its own\\): `,
      ),
    );
    expect(refused.body.raw).toEqual({ ok: true });
    expect(Object.keys(refused.body.errors)).toEqual([expect.stringMatching(/^tokenize\.card/)]);
  });

  it("applies the invoking request's SVC-TRANSACTION-ID to the tokenize block", async () => {
    const code = source(
      'module.exports = async function (req) {',
      '  return { raw: { ok: true }, tokenize: { v: req.args.v } };',
      '};',
    );
    const reactor = await createReactor(emu(), { code });
    const transaction = await emu().call('POST', '/transactions', { key: emu().privateKey });
    expect(transaction.status, transaction.text).toBe(201);
    const tx = { 'svc-transaction-id': transaction.body.id as string };
    const result = await invoke(emu(), reactor.id, { args: { v: 'staged value' } }, { headers: tx });
    expect(result.status, result.text).toBe(200);
    const id = result.body.tokens.v as string;
    expect(id).toMatch(UUID);
    // Invisible outside the transaction until it commits.
    expect((await emu().call('GET', `/tokens/${id}`, { key: emu().privateKey })).status).toBe(404);
    const inside = await emu().call('GET', `/tokens/${id}`, { key: emu().privateKey, headers: tx });
    expect(inside.status).toBe(200);
    expect(
      (await emu().call('POST', `/transactions/${transaction.body.id}/commit`, { key: emu().privateKey })).status,
    ).toBe(200);
    expect((await emu().call('GET', `/tokens/${id}`, { key: emu().privateKey })).status).toBe(200);
    expect(
      (await emu().call('POST', '/detokenize', { key: emu().privateKey, body: { v: `{{ ${id} }}` } })).body,
    ).toEqual({ v: 'staged value' });

    // Rolled back, the tokens never appear; an unknown transaction is refused.
    const second = (await emu().call('POST', '/transactions', { key: emu().privateKey })).body.id as string;
    const rolled = await invoke(
      emu(),
      reactor.id,
      { args: { v: 'discarded' } },
      { headers: { 'svc-transaction-id': second } },
    );
    expect(rolled.status).toBe(200);
    expect((await emu().call('POST', `/transactions/${second}/rollback`, { key: emu().privateKey })).status).toBe(200);
    expect((await emu().call('GET', `/tokens/${rolled.body.tokens.v}`, { key: emu().privateKey })).status).toBe(404);
    expect(
      (await invoke(emu(), reactor.id, { args: { v: 'x' } }, { headers: { 'svc-transaction-id': UNKNOWN } })).status,
    ).toBe(404);
  });
});

describe('errors thrown by reactor code', () => {
  /** The detail of each class, fixed (the vendor's reactor-formulas SDK). */
  const FIXED: Record<number, string> = {
    400: 'Bad Request',
    401: 'Authentication Failed',
    402: 'Invalid Payment Method',
    403: 'Forbidden',
    429: 'Rate Limit Exceeded',
  };
  const emu = sharedEmulator(OPTIONS);
  const lines = [
    'module.exports = async function (req) {',
    '  const { kind } = req.args;',
    "  if (kind === 'authentication') throw new AuthenticationError('who are you?');",
    "  if (kind === 'authorization') throw new AuthorizationError('not you');",
    "  if (kind === 'bad-request') throw new BadRequestError('missing amount');",
    "  if (kind === 'payment') throw new InvalidPaymentMethodError('card declined');",
    "  if (kind === 'rate') throw new RateLimitError('slow down');",
    "  if (kind === 'required') { const errors = require('@svc/errors'); throw new errors.BadRequestError('from the module'); }",
    "  if (kind === 'custom') throw new CustomHttpResponseError({ status: 418, headers: { 'x-teapot': 'yes' }, body: { short: 'stout' } });",
    "  if (kind === 'plain') throw new TypeError('kaput');",
    "  if (kind === 'null') return req.args.missing.property;",
    "  if (kind === 'spin') { while (true) {} }",
    "  if (kind === 'log') { console.log('hello', req.args.n); console.error('bad', { a: 1 }); console.warn('careful'); }",
    '  return { raw: { kind } };',
    '};',
  ];
  const PLAIN_LINE = lines.findIndex((line) => line.includes("kind === 'plain'")) + 1;
  let reactor: Reactor;
  let file: string;

  beforeAll(async () => {
    const name = unique('errors');
    const created = await emu().call<Reactor>('POST', '/reactors', {
      body: { name, code: source(...lines), configuration: {} },
    });
    expect(created.status, created.text).toBe(201);
    reactor = created.body;
    file = `${name}.js`;
  });

  it.each([
    ['authentication', 401, 'who are you?'],
    ['authorization', 403, 'not you'],
    ['bad-request', 400, 'missing amount'],
    ['payment', 402, 'card declined'],
    ['rate', 429, 'slow down'],
    ['required', 400, 'from the module'],
  ] as const)(
    'maps %s to %i as problem+json, the fixed text of its class as detail and the message in errors',
    async (kind, status, message) => {
      const result = await invoke(emu(), reactor.id, { args: { kind } });
      expectProblem(result, status, FIXED[status]!);
      expect(result.body.errors).toEqual({ error: [message] });
      expect(result.body.trace_id).toBe(traceId(result));
      expect(result.text).not.toMatch(/\s{2,}at /);
    },
  );

  it('passes a CustomHttpResponseError through as it is', async () => {
    const result = await invoke(emu(), reactor.id, { args: { kind: 'custom' } });
    expect(result.status).toBe(418);
    expect(result.headers['x-teapot']).toBe('yes');
    expect(result.headers['content-type']).toMatch(/^application\/json/);
    expect(result.body).toEqual({ short: 'stout' });
  });

  it('answers 500 for any other error with where it was thrown (file:line:column), never a stack trace', async () => {
    const NULL_LINE = lines.findIndex((line) => line.includes("kind === 'null'")) + 1;
    for (const [kind, detail] of [
      ['plain', new RegExp(`^${file}:${PLAIN_LINE}:\\d+: TypeError: kaput$`)],
      ['null', new RegExp(`^${file}:${NULL_LINE}:\\d+: TypeError: .*property`)],
    ] as const) {
      const result = await invoke(emu(), reactor.id, { args: { kind } });
      expectProblem(result, 500, detail);
      expect(result.text).not.toContain('    at ');
      expect(result.text).not.toMatch(/\bat \S+ \(/);
      // One location, the user's own file: no other file and line.
      expect(result.text.match(/\.(js|ts):\d+/g)).toHaveLength(1);
      expect(result.text).not.toMatch(/(file:\/\/|\/work\/|\/tmp\/|node_modules|node:internal)/);
    }
  });

  it('reports invocations, console output and the user stack as events', async () => {
    const logged = await invoke(emu(), reactor.id, { args: { kind: 'log', n: 7 } });
    expect(logged.status).toBe(200);
    const loggedId = traceId(logged);
    await eventually(() => expect(invocationEvents(emu(), loggedId)).toHaveLength(1));
    const time = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(invocationEvents(emu(), loggedId)[0]).toEqual({
      time,
      type: 'invocation',
      kind: 'reactor',
      name: reactor.name,
      id: reactor.id,
      tenantId: emu().tenantId,
      status: 200,
      ms: expect.any(Number),
      requestId: loggedId,
    });
    expect(invocationEvents(emu(), loggedId)[0]!.ms).toBeGreaterThanOrEqual(0);
    const consoleEvents = emu().events.filter((event) => event.type === 'console' && event.requestId === loggedId);
    expect(consoleEvents).toEqual([
      {
        time,
        type: 'console',
        source: reactor.name,
        tenantId: emu().tenantId,
        level: 'log',
        text: 'hello 7',
        requestId: loggedId,
      },
      {
        time,
        type: 'console',
        source: reactor.name,
        tenantId: emu().tenantId,
        level: 'error',
        text: 'bad { a: 1 }',
        requestId: loggedId,
      },
      {
        time,
        type: 'console',
        source: reactor.name,
        tenantId: emu().tenantId,
        level: 'warn',
        text: 'careful',
        requestId: loggedId,
      },
    ]);

    const failed = await invoke(emu(), reactor.id, { args: { kind: 'plain' } });
    expect(failed.status).toBe(500);
    const failedId = traceId(failed);
    const [event] = invocationEvents(emu(), failedId);
    expect(event).toMatchObject({
      type: 'invocation',
      name: reactor.name,
      id: reactor.id,
      status: 500,
      ms: expect.any(Number),
      error: expect.stringContaining('kaput'),
    });
    expect(event!.stack).toMatch(/^TypeError: kaput/);
    expect(event!.stack).toContain(`${file}:${PLAIN_LINE}:`);

    const refused = await invoke(emu(), reactor.id, { args: { kind: 'payment' } });
    const [paymentEvent] = invocationEvents(emu(), traceId(refused));
    expect(paymentEvent).toMatchObject({ status: 402, name: reactor.name });
    expect(paymentEvent!.stack).toContain(`${file}:${lines.findIndex((line) => line.includes("'payment'")) + 1}:`);
  });

  it('answers 408 when the code runs past the synchronous timeout, and the reactor keeps working', async () => {
    const started = Date.now();
    const result = await invoke(emu(), reactor.id, { args: { kind: 'spin' } });
    const elapsed = Date.now() - started;
    expectProblem(result, 408);
    // Not before the timeout; the 408 says it was the timeout (no upper bound: load slows a run down).
    expect(elapsed).toBeGreaterThanOrEqual(1400);
    expect(invocationEvents(emu(), traceId(result))[0]).toMatchObject({ status: 408, name: reactor.name });
    const after = await invoke(emu(), reactor.id, { args: { kind: 'fine' } });
    expect(after.status, after.text).toBe(200);
    expect(after.body).toEqual({ raw: { kind: 'fine' } });
  });
});

describe('asynchronous invocation with a webhook (Enterprise)', () => {
  const emu = sharedEmulator(OPTIONS);
  const code = source(
    'module.exports = async function (req) {',
    "  const { delay = 0, fail = false, msg = 'hi' } = req.args;",
    '  if (delay) await new Promise((resolve) => setTimeout(resolve, delay));',
    "  if (fail) throw new BadRequestError('refused: ' + msg);",
    "  return { raw: { echoed: msg }, tokenize: { t: 'secret-' + msg } };",
    '};',
  );
  let reactor: Reactor;

  beforeAll(async () => {
    const created = await emu().call<Reactor>('POST', '/reactors', {
      body: { name: unique('async'), code, configuration: {} },
    });
    expect(created.status, created.text).toBe(201);
    reactor = created.body;
  });

  const result = (requestId: string, key: string | null = emu().privateKey, reactorId = reactor.id) =>
    emu().call('GET', `/reactors/${reactorId}/results/${requestId}`, { key });

  it('checks callback_url and timeout_ms', async () => {
    const hook = await receiver();
    for (const body of [
      { callback_url: 'ftp://x' },
      { callback_url: 'not a url' },
      { callback_url: '/relative/path' },
      { callback_url: 'javascript:alert(1)' },
      { callback_url: 42 },
      { callback_url: hook.url, timeout_ms: 9999 },
      { callback_url: hook.url, timeout_ms: 210_001 },
      { callback_url: hook.url, timeout_ms: 10_000.5 },
      { callback_url: hook.url, timeout_ms: '10000' },
      { timeout_ms: 10_000 },
      { timeout_ms: 210_000 },
    ]) {
      const refused = await invoke(emu(), reactor.id, { args: {}, ...body });
      expectProblem(refused, 400);
    }
    const withoutCallback = await invoke(emu(), reactor.id, { timeout_ms: 20_000 });
    expect(withoutCallback.body.errors).toHaveProperty('timeout_ms');
    expect(hook.received).toHaveLength(0);
    // The bounds themselves are fine.
    for (const timeout_ms of [10_000, 210_000]) {
      const accepted = await invoke(emu(), reactor.id, {
        args: { msg: `t${timeout_ms}` },
        callback_url: hook.url,
        timeout_ms,
      });
      expect(accepted.status, accepted.text).toBe(202);
    }
    await hook.waitFor(2);
  });

  it('answers 202 at once, then delivers a signed webhook that verifies with the tenant secret', async () => {
    const hook = await receiver();
    // "At once": answered while the run (3 s) is still pending, as its result says below.
    const accepted = await invoke(emu(), reactor.id, { args: { delay: 3000, msg: 'slow' }, callback_url: hook.url });
    expect(accepted.status, accepted.text).toBe(202);
    expect(accepted.body).toEqual({ id: expect.stringMatching(UUID), status: 'pending' });
    const requestId = accepted.body.id as string;

    const pending = await result(requestId);
    expect(pending.status).toBe(200);
    expect(pending.body).toEqual({
      id: requestId,
      reactor_id: reactor.id,
      status: 'pending',
      started_at: expect.any(String),
      delivery: { status: 'pending', attempts: 0, last_status: null, event_id: expect.stringMatching(UUID) },
    });
    expect(hook.received).toHaveLength(0);

    const [delivery] = await hook.waitFor(1, 15_000);
    expect(delivery!.method).toBe('POST');
    expect(delivery!.url).toBe('/hooks/reactor?source=svc');
    expect(delivery!.headers['content-type']).toMatch(/^application\/json/);
    const payload = JSON.parse(delivery!.body);
    expect(payload).toEqual({
      id: requestId,
      reactor_id: reactor.id,
      status: 'completed',
      raw: { echoed: 'slow' },
      tokens: { t: expect.stringMatching(UUID) },
      started_at: expect.any(String),
      completed_at: expect.any(String),
    });
    expect(Date.parse(payload.completed_at) - Date.parse(payload.started_at)).toBeGreaterThanOrEqual(2900);
    expect(
      (await emu().call('POST', '/detokenize', { key: emu().privateKey, body: { t: `{{ ${payload.tokens.t} }}` } }))
        .body,
    ).toEqual({ t: 'secret-slow' });

    // The signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body"> with the tenant's secret.
    const secretResult = await emu().call('GET', '/_emulator/webhook-secret');
    expect(secretResult.status).toBe(200);
    const secret = secretResult.body.secret as string;
    expect(secret).toBe(emu().started.webhookSecret);
    expect(secret.length).toBeGreaterThanOrEqual(16);
    const header = delivery!.headers['svc-signature'];
    expect(typeof header).toBe('string');
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header as string);
    expect(match, header as string).not.toBeNull();
    const [, t, v1] = match!;
    expect(Math.abs(Number(t) - Date.now() / 1000)).toBeLessThan(60);
    expect(verifySignature(secret, delivery!.body, header as string)).toBe(true);
    expect(createHmac('sha256', secret).update(`${t}.${delivery!.body}`).digest('hex')).toBe(v1);
    // and it fails for anything else
    expect(verifySignature(secret, delivery!.body.replace('slow', 'fast'), header as string)).toBe(false);
    expect(verifySignature(`${secret}x`, delivery!.body, header as string)).toBe(false);
    expect(verifySignature(secret, delivery!.body, header as string, 300, Date.now() + 3_600_000)).toBe(false);

    // The result is there to poll too, the same as the webhook said, with its delivery.
    await eventually(async () =>
      expect((await result(requestId)).body).toEqual({
        ...payload,
        delivery: { status: 'delivered', attempts: 1, last_status: 200, event_id: delivery!.headers['svc-webhook-id'] },
      }),
    );
    await eventually(() =>
      expect(webhookEvents(emu(), requestId)).toEqual([
        expect.objectContaining({ attempt: 1, status: 200, ok: true, url: hook.url.split('?')[0] }),
      ]),
    );
    // The secret is for management keys only.
    expectProblem(await emu().call('GET', '/_emulator/webhook-secret', { key: emu().privateKey }), 403);
  });

  it('delivers status failed with the error problem when the reactor throws', async () => {
    const hook = await receiver();
    const accepted = await invoke(emu(), reactor.id, { args: { fail: true, msg: 'no way' }, callback_url: hook.url });
    expect(accepted.status).toBe(202);
    const [delivery] = await hook.waitFor(1);
    const payload = JSON.parse(delivery!.body);
    expect(payload).toEqual({
      id: accepted.body.id,
      reactor_id: reactor.id,
      status: 'failed',
      error: {
        type: expect.any(String),
        title: expect.any(String),
        status: 400,
        detail: 'Bad Request',
        errors: { error: ['refused: no way'] },
      },
      started_at: expect.any(String),
      completed_at: expect.any(String),
    });
    expect(
      verifySignature(emu().started.webhookSecret, delivery!.body, delivery!.headers['svc-signature'] as string),
    ).toBe(true);
    await eventually(async () =>
      expect((await result(accepted.body.id)).body).toEqual({
        ...payload,
        delivery: expect.objectContaining({ status: 'delivered' }),
      }),
    );
  });

  it('retries a receiver that fails: 500, 500, then 200 makes exactly 3 attempts, each reported', async () => {
    const hook = await receiver((n) => (n <= 2 ? 500 : 200));
    const accepted = await invoke(emu(), reactor.id, { args: { msg: 'retry' }, callback_url: hook.url });
    expect(accepted.status).toBe(202);
    const requestId = accepted.body.id as string;
    const deliveries = await hook.waitFor(3);
    await eventually(() => expect(webhookEvents(emu(), requestId)).toHaveLength(3));
    await sleep(400);
    expect(hook.received).toHaveLength(3);
    // The same payload each time, each signed.
    expect(new Set(deliveries.map((delivery) => delivery.body)).size).toBe(1);
    for (const delivery of deliveries) {
      expect(
        verifySignature(emu().started.webhookSecret, delivery.body, delivery.headers['svc-signature'] as string),
      ).toBe(true);
    }
    const events = webhookEvents(emu(), requestId);
    expect(events.map(({ attempt, status, ok }) => ({ attempt, status, ok }))).toEqual([
      { attempt: 1, status: 500, ok: false },
      { attempt: 2, status: 500, ok: false },
      { attempt: 3, status: 200, ok: true },
    ]);
    // the log names the receiver without its query string (which may carry a secret)
    expect(events.every((event) => event.reactorId === reactor.id && event.url === hook.url.split('?')[0])).toBe(true);
    expect((await result(requestId)).body).toMatchObject({
      status: 'completed',
      delivery: { status: 'delivered', attempts: 3, last_status: 200 },
    });
  });

  it('gives up after the configured attempts on a receiver that never answers; the result stays readable', async () => {
    const hook = await receiver(() => 'hang');
    const accepted = await invoke(emu(), reactor.id, { args: { msg: 'hung' }, callback_url: hook.url });
    expect(accepted.status).toBe(202);
    const requestId = accepted.body.id as string;
    await hook.waitFor(WEBHOOKS.attempts, 8000);
    await eventually(() => expect(webhookEvents(emu(), requestId)).toHaveLength(WEBHOOKS.attempts), 8000);
    const events = webhookEvents(emu(), requestId);
    expect(events.map((event) => event.attempt)).toEqual([1, 2, 3]);
    for (const event of events) {
      expect(event.ok).toBe(false);
      expect(event.status).toBeUndefined();
      expect(event.error).toMatch(/no answer within 300 ms/);
    }
    await sleep(600);
    expect(hook.received).toHaveLength(WEBHOOKS.attempts);
    const polled = await result(requestId);
    expect(polled.status).toBe(200);
    // The code ran (completed); nobody heard of it (the delivery failed).
    expect(polled.body).toMatchObject({
      id: requestId,
      reactor_id: reactor.id,
      status: 'completed',
      raw: { echoed: 'hung' },
      delivery: { status: 'failed', attempts: 3, last_status: null },
    });
  });

  it('uses timeout_ms, not the synchronous timeout, for an asynchronous run', async () => {
    const hook = await receiver();
    // 2 s is past the 1.5 s synchronous timeout of this emulator.
    const sync = await invoke(emu(), reactor.id, { args: { delay: 2000 } });
    expectProblem(sync, 408);
    const accepted = await invoke(emu(), reactor.id, {
      args: { delay: 2000, msg: 'patient' },
      callback_url: hook.url,
      timeout_ms: 10_000,
    });
    expect(accepted.status).toBe(202);
    const [delivery] = await hook.waitFor(1, 8000);
    expect(JSON.parse(delivery!.body)).toMatchObject({ status: 'completed', raw: { echoed: 'patient' } });
  });

  it('answers results by request id: 404 for an unknown one, another reactor or another tenant', async () => {
    const hook = await receiver();
    const accepted = await invoke(emu(), reactor.id, { args: { msg: 'mine' }, callback_url: hook.url });
    expect(accepted.status).toBe(202);
    const requestId = accepted.body.id as string;
    await hook.waitFor(1);
    await eventually(async () => expect((await result(requestId)).body.status).toBe('completed'));
    expect((await result(requestId.toUpperCase())).body.id).toBe(requestId);

    expectProblem(await result(UNKNOWN), 404);
    const otherReactor = await createReactor(emu(), {});
    expectProblem(await result(requestId, emu().privateKey, otherReactor.id), 404);
    const other = await createTenant(emu());
    const theirs = await result(requestId, other.private_key);
    expectProblem(theirs, 404);
    expect(theirs.text).not.toContain('mine');
    expectProblem(await result(requestId, null), 401);
  });

  it('keeps the signing secret across restarts of a persistent emulator, and gives each tenant its own', async () => {
    const dir = await tempDir();
    const managementKey = 'restart-test-management-key-0001';
    const first = await startEmulator({ dir, managementKey });
    const secret = first.started.webhookSecret;
    expect((await first.call('GET', '/_emulator/webhook-secret')).body.secret).toBe(secret);
    const other = await createTenant(first);
    const otherSecret = (await first.call('GET', '/_emulator/webhook-secret', { key: other.management_key })).body
      .secret as string;
    expect(typeof otherSecret).toBe('string');
    expect(otherSecret).not.toBe(secret);
    await first.dispose();

    const second = await startEmulator({ dir, managementKey });
    expect(second.tenantId).toBe(first.tenantId);
    expect(second.started.webhookSecret).toBe(secret);
    expect((await second.call('GET', '/_emulator/webhook-secret')).body.secret).toBe(secret);
    expect((await second.call('GET', '/_emulator/webhook-secret', { key: other.management_key })).body.secret).toBe(
      otherSecret,
    );
    // Another emulator (another store) has another secret.
    expect(emu().started.webhookSecret).not.toBe(secret);
  });
});

describe('the standard tier', () => {
  it('refuses callback_url and timeout_ms with 403 naming the Enterprise tier; a synchronous invoke works', async () => {
    const emu = await startEmulator({ ...OPTIONS, tier: 'standard' });
    const hook = await receiver();
    const reactor = await createReactor(emu, {});
    for (const body of [
      { callback_url: hook.url },
      { callback_url: hook.url, timeout_ms: 20_000 },
      { timeout_ms: 20_000 },
    ]) {
      expectProblem(await invoke(emu, reactor.id, { args: {}, ...body }), 403, /Enterprise/);
    }
    const sync = await invoke(emu, reactor.id, { args: { tier: 'standard' } });
    expect(sync.status, sync.text).toBe(200);
    expect(sync.body.raw.args).toEqual({ tier: 'standard' });
    await sleep(200);
    expect(hook.received).toHaveLength(0);
  });
});

describe('tenant isolation', () => {
  const emu = sharedEmulator(OPTIONS);

  it("answers 404 to another tenant's keys for a reactor on every endpoint", async () => {
    const reactor = await createReactor(emu(), { configuration: { owner: 'me' } });
    const other = await createTenant(emu());
    const as = { key: other.management_key };
    for (const [method, path, options] of [
      ['GET', `/reactors/${reactor.id}`, {}],
      ['PUT', `/reactors/${reactor.id}`, { body: { name: 'stolen', code: ECHO, configuration: {} } }],
      ['PATCH', `/reactors/${reactor.id}`, { raw: '{"name":"stolen"}', contentType: 'application/merge-patch+json' }],
      ['DELETE', `/reactors/${reactor.id}`, {}],
    ] as [string, string, CallOptions][]) {
      const result = await emu().call(method, path, { ...options, ...as });
      expectProblem(result, 404);
      expect(result.body.detail, `${method} ${path}`).toBe(`No reactor with id ${reactor.id}.`);
    }
    const listed = await emu().call<Page<Reactor>>('GET', `/reactors?id=${reactor.id}`, as);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([]);
    expect((await emu().call<Page<Reactor>>('GET', '/reactors?size=100', as)).body.data.map((r) => r.id)).not.toContain(
      reactor.id,
    );

    const invoked = await invoke(emu(), reactor.id, { args: {} }, { key: other.private_key });
    expectProblem(invoked, 404);
    expect(invoked.text).not.toContain('owner');

    expect((await emu().call('GET', `/reactors/${reactor.id}`)).body).toEqual(reactor);
    expect((await invoke(emu(), reactor.id)).body.raw.configuration).toEqual({ owner: 'me' });
    // And the other tenant's own reactors stay its own.
    const theirs = await emu().call<Reactor>('POST', '/reactors', {
      ...as,
      body: { name: 'theirs', code: ECHO, configuration: {} },
    });
    expect(theirs.status).toBe(201);
    expect(theirs.body.tenant_id).toBe(other.id);
    expectProblem(await emu().call('GET', `/reactors/${theirs.body.id}`), 404);
    expectProblem(await invoke(emu(), theirs.body.id), 404);
  });
});

/** Bugs found while writing these tests, each fixed and kept as the test that found it. */
describe('bugs found and fixed', () => {
  const emu = sharedEmulator(OPTIONS);

  // The version of a reactor's code hashes its file name too: a rename loads it anew.
  it('after a rename without a code change, stack traces name the new file', async () => {
    const code = source('module.exports = async function () {', "  throw new Error('where am I');", '};');
    const reactor = await createReactor(emu(), { name: unique('before-rename'), code });
    const newName = unique('after-rename');
    expect((await patch(emu(), reactor.id, { name: newName })).status).toBe(204);
    const failed = await invoke(emu(), reactor.id);
    expect(failed.status).toBe(500);
    const [event] = invocationEvents(emu(), traceId(failed));
    expect(event!.name).toBe(newName);
    expect(event!.stack).toMatch(/^Error: where am I/);
    expect(event!.stack).toContain(`${newName}.js:2:`);
  });

  // A reactor's name for the log is set only once its new code has loaded.
  it("labels the old code's console output with the old name after a refused update", async () => {
    const code = source(
      'module.exports = async function () {',
      "  console.log('still the old code');",
      '  return {};',
      '};',
    );
    const reactor = await createReactor(emu(), { name: unique('kept-name'), code });
    const rejected = unique('rejected-name');
    expectProblem(
      await emu().call('PUT', `/reactors/${reactor.id}`, {
        body: { name: rejected, code: 'module.exports = 1;', configuration: {} },
      }),
      422,
    );
    expect((await emu().call('GET', `/reactors/${reactor.id}`)).body.name).toBe(reactor.name);
    const invoked = await invoke(emu(), reactor.id);
    expect(invoked.status).toBe(200);
    const requestId = traceId(invoked);
    const lines = emu().events.filter((event) => event.type === 'console' && event.requestId === requestId);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ text: 'still the old code' });
    expect(lines[0]).toMatchObject({ source: reactor.name });
  });

  // Fixed: WebhookService.dispose() wakes the backoff sleeps, so a delivery waiting to retry ends
  // (still pending, resumed at the next start) and Emulator.dispose() does not hang.
  it('dispose does not hang while a webhook delivery waits to retry', async () => {
    const own = await startEmulator({
      inMemory: true,
      webhooks: { attempts: 2, retryBaseMs: 60_000, attemptTimeoutMs: 300 },
    });
    const hook = await receiver(() => 500);
    const reactor = await createReactor(own, {});
    const accepted = await invoke(own, reactor.id, { callback_url: hook.url });
    expect(accepted.status).toBe(202);
    await hook.waitFor(1);
    await eventually(() => expect(webhookEvents(own, accepted.body.id)).toHaveLength(1));
    const outcome = await Promise.race([
      own.dispose().then(() => 'disposed'),
      sleep(3000).then(() => 'still hanging after 3 s'),
    ]);
    expect(outcome).toBe('disposed');
  });
});
