import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { request as undiciRequest } from 'undici';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Page, Proxy } from '../../../src/api/types.js';
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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const PROXY_KEY = /^proxy_local_[1-9A-HJ-NP-Za-km-z]{26}$/;
const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2099 };
const MERGE_PATCH = 'application/merge-patch+json';
const FIVE_MB = 5 * 1024 * 1024;

/** Transform source, one line per argument. */
const source = (...lines: string[]) => `${lines.join('\n')}\n`;

/** Sends the destination everything it was given, as JSON, plus a header no caller could send. */
const REQUEST_ECHO = source(
  'module.exports = async function (req) {',
  '  return {',
  '    body: { args: req.args, configuration: req.configuration, svc: req.svc === null ? null : typeof req.svc },',
  "    headers: { 'Content-Type': 'application/json', 'X.Signed': 'sig-' + req.args.method, 'X-Greeting': req.configuration.greeting || 'none' },",
  '  };',
  '};',
);

/** Wraps what the destination answered. */
const RESPONSE_WRAP = source(
  'module.exports = async function (req) {',
  '  return {',
  '    body: { wrapped: req.args.body, type: typeof req.args.body, seen: req.args.headers, configuration: req.configuration },',
  "    headers: { 'Content-Type': 'application/json', 'X-Transformed': 'yes' },",
  '  };',
  '};',
);

const versioned = (version: number) =>
  source(
    `module.exports = async (req) => ({ body: { version: ${version} }, headers: { 'Content-Type': 'application/json' } });`,
  );

// ---------------------------------------------------------------------------------------------
// Helpers

interface Received {
  method: string;
  url: string;
  rawHeaders: string[];
  headers: IncomingHttpHeaders;
  body: string;
  bytes: Buffer;
}

interface Answer {
  status?: number;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  delayMs?: number;
  /** Hold the request open without ever answering. */
  never?: boolean;
}

interface Destination {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: Received[];
  /** What to answer; may be changed between calls. */
  answer: Answer | ((request: Received) => Answer);
  /** The one request it received (fails when there were none or several). */
  single(): Received;
}

/** A real loopback destination recording every request, closed when the test ends. */
async function destination(answer: Destination['answer'] = {}): Promise<Destination> {
  const requests: Received[] = [];
  const target: Destination = {
    url: '',
    requests,
    answer,
    single() {
      expect(requests, 'requests at the destination').toHaveLength(1);
      return requests[0]!;
    },
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const bytes = Buffer.concat(chunks);
      const received: Received = {
        method: request.method ?? '',
        url: request.url ?? '',
        rawHeaders: request.rawHeaders,
        headers: request.headers,
        body: bytes.toString('utf8'),
        bytes,
      };
      requests.push(received);
      const reply = typeof target.answer === 'function' ? target.answer(received) : target.answer;
      if (reply.never) return;
      const send = () => {
        response.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
        response.end(reply.body ?? JSON.stringify({ ok: true }));
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  target.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return target;
}

/** A port nothing listens on (a server that was started and closed again). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The header names as they arrived (case included). */
const namesOf = (received: Received) => received.rawHeaders.filter((_value, index) => index % 2 === 0);

async function createProxy(emu: TestEmulator, body: Record<string, unknown>): Promise<Proxy> {
  const created = await emu.call<Proxy>('POST', '/proxies', {
    body: { name: unique('proxy'), destination_url: 'http://127.0.0.1:9', ...body },
  });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

interface InvokeOptions extends CallOptions {
  /** After /proxy, with an optional query. */
  path?: string;
  /** Where the proxy key goes (default the SVC-PROXY-KEY header). */
  keyIn?: 'header' | 'query' | 'none';
}

/** Invokes a proxy, with the private key as SVC-API-KEY unless told otherwise. */
function invoke(emu: TestEmulator, proxyKey: string, method = 'GET', options: InvokeOptions = {}): Promise<HttpResult> {
  const { path: suffix = '', keyIn = 'header', headers, key = emu.privateKey, ...rest } = options;
  const target =
    keyIn === 'query'
      ? `${suffix}${suffix.includes('?') ? '&' : '?'}svc-proxy-key=${encodeURIComponent(proxyKey)}`
      : suffix;
  return emu.call(method, `/proxy${target}`, {
    ...rest,
    key,
    headers: { ...(keyIn === 'header' && { 'SVC-PROXY-KEY': proxyKey }), ...headers },
  });
}

function patchProxy(emu: TestEmulator, id: string, value: unknown, options: CallOptions = {}): Promise<HttpResult> {
  return emu.call('PATCH', `/proxies/${id}`, { raw: JSON.stringify(value), contentType: MERGE_PATCH, ...options });
}

function expectProblem(result: HttpResult, status: number, detail?: RegExp): void {
  expect(result.status, result.text).toBe(status);
  expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(result.body.status).toBe(status);
  if (detail) expect(result.body.detail).toMatch(detail);
}

/** An error inside the proxy: `{"proxy_error": problem}` and no SVC-PROXY-DESTINATION-STATUS. */
function expectProxyError(result: HttpResult, status: number, detail?: RegExp): void {
  expect(result.status, result.text).toBe(status);
  expect(result.headers['svc-proxy-destination-status']).toBeUndefined();
  expect(result.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(result.body)).toEqual(['proxy_error']);
  expect(result.body.proxy_error).toMatchObject({
    status,
    title: expect.any(String),
    detail: expect.any(String),
    trace_id: result.headers['svc-trace-id'],
  });
  if (detail) expect(result.body.proxy_error.detail).toMatch(detail);
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath ?? entry.path, entry.name));
}

// ---------------------------------------------------------------------------------------------

describe('proxy CRUD (spec 4.3)', () => {
  const emu = sharedEmulator();

  it('POST creates a proxy: 201 with a generated key and the defaults', async () => {
    const self = await emu().call('GET', '/applications/key');
    const name = unique('crud');
    const created = await emu().call<Proxy>('POST', '/proxies', {
      body: { name, destination_url: 'https://api.example.com/v1' },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.headers['content-type']).toMatch(/^application\/json/);
    expect(created.body).toEqual({
      id: expect.stringMatching(UUID),
      tenant_id: emu().tenantId,
      name,
      key: expect.stringMatching(PROXY_KEY),
      destination_url: 'https://api.example.com/v1',
      request_transform: null,
      response_transform: null,
      application_id: null,
      configuration: null,
      require_auth: true,
      created_by: self.body.id,
      created_at: expect.any(String),
      modified_by: self.body.id,
      modified_at: expect.any(String),
    });
    expect(Number.isNaN(Date.parse(created.body.created_at))).toBe(false);
  });

  it('gives every proxy a key of its own, long and random', async () => {
    const proxies = await Promise.all(Array.from({ length: 6 }, () => createProxy(emu(), {})));
    const keys = proxies.map((proxy) => proxy.key);
    expect(new Set(keys).size).toBe(keys.length);
    for (const key of keys) {
      expect(key.length).toBeGreaterThanOrEqual(32);
      // 26 base58 characters: about 150 bits; no key is derived from the id or the name.
      expect(key).not.toContain(proxies.find((proxy) => proxy.key === key)!.id.slice(0, 8));
    }
    // The random parts share no common prefix beyond chance.
    const randomParts = keys.map((key) => key.slice('proxy_local_'.length));
    expect(new Set(randomParts.map((part) => part.slice(0, 4))).size).toBeGreaterThan(1);
  });

  it('stores transforms, configuration, the Application (returned as application_id) and require_auth as given', async () => {
    const app = await application(emu(), { type: 'private', permissions: ['token:use'] });
    const body = {
      name: unique('full'),
      destination_url: 'http://127.0.0.1:9/base?x=1',
      request_transform: { code: REQUEST_ECHO },
      response_transform: { code: RESPONSE_WRAP },
      application: { id: app.id },
      configuration: { greeting: 'hello', region: 'eu' },
      require_auth: false,
    };
    const created = await emu().call<Proxy>('POST', '/proxies', { body });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      name: body.name,
      destination_url: body.destination_url,
      request_transform: { code: REQUEST_ECHO },
      response_transform: { code: RESPONSE_WRAP },
      application_id: app.id,
      configuration: { greeting: 'hello', region: 'eu' },
      require_auth: false,
    });
    expect(created.body).not.toHaveProperty('application');
  });

  it('GET by id returns the proxy with its key', async () => {
    const proxy = await createProxy(emu(), { configuration: { a: '1' } });
    const got = await emu().call<Proxy>('GET', `/proxies/${proxy.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(proxy);
    expect(got.body.key).toBe(proxy.key);
  });

  it('GET of an unknown id is 404, of a malformed id 400', async () => {
    expectProblem(await emu().call('GET', `/proxies/${UNKNOWN}`), 404, new RegExp(UNKNOWN));
    expectProblem(await emu().call('GET', '/proxies/not-a-uuid'), 400);
  });

  it('lists with id and name (wildcard) filters and pagination', async () => {
    const prefix = unique('list');
    const made: Proxy[] = [];
    for (const suffix of ['alpha', 'beta', 'gamma'])
      made.push(await createProxy(emu(), { name: `${prefix}-${suffix}` }));
    const other = await createProxy(emu(), { name: unique('elsewhere') });

    const byId = await emu().call<Page<Proxy>>('GET', `/proxies?id=${made[0]!.id}&id=${other.id}`);
    expect(byId.status, byId.text).toBe(200);
    expect(byId.body.data.map((proxy) => proxy.id).sort()).toEqual([made[0]!.id, other.id].sort());
    // The list shows each proxy as GET does, key included.
    expect(byId.body.data.find((proxy) => proxy.id === other.id)).toEqual(other);

    const names = async (pattern: string) =>
      (await emu().call<Page<Proxy>>('GET', `/proxies?name=${encodeURIComponent(pattern)}`)).body.data
        .map((proxy) => proxy.name)
        .sort();
    // `*` is a wildcard, the match is anchored and case-insensitive.
    expect(await names(`${prefix.toUpperCase()}-*TA`)).toEqual([`${prefix}-beta`]);
    expect(await names(`${prefix}-*m*`)).toEqual([`${prefix}-gamma`]);
    expect(await names(`*${prefix.slice(-6)}-*a`)).toEqual([`${prefix}-alpha`, `${prefix}-beta`, `${prefix}-gamma`]);
    expect(await names(`${prefix}-alph`)).toEqual([]);
    expect(await names(`${prefix}-alpha`)).toEqual([`${prefix}-alpha`]);

    const page2 = await emu().call<Page<Proxy>>('GET', `/proxies?name=${prefix}*&size=2&page=2`);
    expect(page2.body.pagination).toEqual({ total_items: 3, page_number: 2, page_size: 2, total_pages: 2 });
    expect(page2.body.data).toHaveLength(1);
    const page1 = await emu().call<Page<Proxy>>('GET', `/proxies?name=${prefix}*&size=2`);
    expect(page1.body.data).toHaveLength(2);
    expect([...page1.body.data, ...page2.body.data].map((proxy) => proxy.id).sort()).toEqual(
      made.map((proxy) => proxy.id).sort(),
    );

    const past = await emu().call<Page<Proxy>>('GET', `/proxies?name=${prefix}*&size=2&page=5`);
    expect(past.body.data).toEqual([]);
    expectProblem(await emu().call('GET', '/proxies?size=101'), 400);
  });

  it('PUT replaces: omitted optional fields go back to their defaults and the key stays', async () => {
    const app = await application(emu(), { type: 'private', permissions: ['token:use'] });
    const proxy = await createProxy(emu(), {
      request_transform: { code: versioned(1) },
      response_transform: { code: RESPONSE_WRAP },
      application: { id: app.id },
      configuration: { a: '1' },
      require_auth: false,
    });
    const name = unique('renamed');
    const updated = await emu().call<Proxy>('PUT', `/proxies/${proxy.id}`, {
      body: { name, destination_url: 'https://example.org/new' },
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({
      id: proxy.id,
      key: proxy.key,
      name,
      destination_url: 'https://example.org/new',
      request_transform: null,
      response_transform: null,
      application_id: null,
      configuration: null,
      require_auth: true,
      created_at: proxy.created_at,
    });
    expect((await emu().call('GET', `/proxies/${proxy.id}`)).body).toEqual(updated.body);
    expectProblem(
      await emu().call('PUT', `/proxies/${UNKNOWN}`, { body: { name, destination_url: 'https://example.org' } }),
      404,
    );
  });

  it('PATCH merges (204, no body); only application/merge-patch+json is accepted (415)', async () => {
    const proxy = await createProxy(emu(), {
      configuration: { a: '1', b: '2' },
      require_auth: true,
      request_transform: { code: versioned(1) },
    });
    const patched = await patchProxy(emu(), proxy.id, {
      configuration: { b: null, c: '3' },
      require_auth: false,
      request_transform: null,
    });
    expect(patched.status, patched.text).toBe(204);
    expect(patched.text).toBe('');
    const got = await emu().call<Proxy>('GET', `/proxies/${proxy.id}`);
    expect(got.body).toMatchObject({
      name: proxy.name,
      key: proxy.key,
      configuration: { a: '1', c: '3' },
      require_auth: false,
      request_transform: null,
    });

    for (const contentType of ['application/json', 'text/plain']) {
      const refused = await emu().call('PATCH', `/proxies/${proxy.id}`, {
        raw: JSON.stringify({ name: 'nope' }),
        contentType,
      });
      expectProblem(refused, 415);
    }
    expect((await emu().call<Proxy>('GET', `/proxies/${proxy.id}`)).body.name).toBe(proxy.name);
  });

  it('PATCH results are validated like a PUT; nothing changes on a 400', async () => {
    const proxy = await createProxy(emu(), {});
    expectProblem(await patchProxy(emu(), proxy.id, { destination_url: 'ftp://example.com' }), 400);
    expectProblem(await patchProxy(emu(), proxy.id, { name: 'x'.repeat(201) }), 400);
    expectProblem(await patchProxy(emu(), proxy.id, { surprise: true }), 400);
    expectProblem(await patchProxy(emu(), proxy.id, ['not', 'an', 'object']), 400);
    expect((await emu().call<Proxy>('GET', `/proxies/${proxy.id}`)).body).toEqual(proxy);
  });

  it('DELETE answers 204; then GET is 404 and the key no longer invokes it (404 proxy_error)', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url });
    expect((await invoke(emu(), proxy.key)).status).toBe(200);
    const deleted = await emu().call('DELETE', `/proxies/${proxy.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectProblem(await emu().call('GET', `/proxies/${proxy.id}`), 404);
    expectProblem(await emu().call('DELETE', `/proxies/${proxy.id}`), 404);
    expectProxyError(await invoke(emu(), proxy.key), 404, /No proxy has this key/);
    expect(target.requests).toHaveLength(1);
  });

  it.each(['ftp://x', '/relative', 'not a url', '', 'javascript:alert(1)'])(
    'refuses destination_url %j (400)',
    async (destinationUrl) => {
      const refused = await emu().call('POST', '/proxies', {
        body: { name: unique('bad-url'), destination_url: destinationUrl },
      });
      expectProblem(refused, 400);
      expect(Object.keys(refused.body.errors ?? {})).toContain('destination_url');
    },
  );

  it('accepts http and https destinations', async () => {
    for (const url of ['http://localhost:8080/x', 'HTTPS://api.example.com']) {
      const created = await emu().call('POST', '/proxies', { body: { name: unique('ok-url'), destination_url: url } });
      expect(created.status, created.text).toBe(201);
    }
  });

  it('takes names of up to 200 characters', async () => {
    expect(
      (await emu().call('POST', '/proxies', { body: { name: 'n'.repeat(200), destination_url: 'http://127.0.0.1:9' } }))
        .status,
    ).toBe(201);
    const refused = await emu().call('POST', '/proxies', {
      body: { name: 'n'.repeat(201), destination_url: 'http://127.0.0.1:9' },
    });
    expectProblem(refused, 400);
    expect(Object.keys(refused.body.errors ?? {})).toContain('name');
  });

  it('refuses unknown fields, missing required ones and wrong types (400)', async () => {
    const base = { name: unique('shape'), destination_url: 'http://127.0.0.1:9' };
    expectProblem(await emu().call('POST', '/proxies', { body: { ...base, key: 'proxy_local_mine' } }), 400);
    expectProblem(await emu().call('POST', '/proxies', { body: { ...base, surprise: 1 } }), 400);
    expectProblem(await emu().call('POST', '/proxies', { body: { name: base.name } }), 400);
    expectProblem(await emu().call('POST', '/proxies', { body: { destination_url: base.destination_url } }), 400);
    expectProblem(await emu().call('POST', '/proxies', { body: { ...base, require_auth: 'yes' } }), 400);
    expectProblem(await emu().call('POST', '/proxies', { body: { ...base, configuration: { a: 1 } } }), 400);
    expectProblem(
      await emu().call('POST', '/proxies', { body: { ...base, request_transform: 'module.exports = 1' } }),
      400,
    );
    expectProblem(await emu().call('POST', '/proxies', { body: { ...base, application_id: UNKNOWN } }), 400);
    const listed = await emu().call<Page<Proxy>>('GET', `/proxies?name=${base.name}`);
    expect(listed.body.data).toEqual([]);
  });

  it('binds only a public or private Application of the tenant (400 otherwise)', async () => {
    const management = await application(emu(), { type: 'management', permissions: ['proxy:read'] });
    const refused = await emu().call('POST', '/proxies', {
      body: { name: unique('bind'), destination_url: 'http://127.0.0.1:9', application: { id: management.id } },
    });
    expectProblem(refused, 400);
    expect(refused.body.errors).toHaveProperty(['application.id']);
    expectProblem(
      await emu().call('POST', '/proxies', {
        body: { name: unique('bind'), destination_url: 'http://127.0.0.1:9', application: { id: UNKNOWN } },
      }),
      400,
    );

    const publicApp = await application(emu(), { type: 'public', permissions: ['token:create'] });
    const bound = await createProxy(emu(), { application: { id: publicApp.id } });
    expect(bound.application_id).toBe(publicApp.id);
    // PATCH binds and unbinds too, with the same check.
    expectProblem(await patchProxy(emu(), bound.id, { application: { id: management.id } }), 400);
    expect((await patchProxy(emu(), bound.id, { application: null })).status).toBe(204);
    expect((await emu().call<Proxy>('GET', `/proxies/${bound.id}`)).body.application_id).toBeNull();
  });

  it.each([
    ['a syntax error', 'module.exports = async function (req) { return {'],
    ['no function', 'module.exports = 42;'],
    ['a throw while loading', "throw new Error('boom at load');"],
  ])('refuses a transform with %s (422); nothing is created', async (_what, code) => {
    const name = unique('bad-code');
    for (const field of ['request_transform', 'response_transform']) {
      const refused = await emu().call('POST', '/proxies', {
        body: { name, destination_url: 'http://127.0.0.1:9', [field]: { code } },
      });
      expectProblem(refused, 422);
    }
    expect((await emu().call<Page<Proxy>>('GET', `/proxies?name=${name}`)).body.data).toEqual([]);
  });

  it('refuses an update whose transform does not load (422, PUT and PATCH); the old transform keeps serving', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url, request_transform: { code: versioned(1) } });
    const put = await emu().call('PUT', `/proxies/${proxy.id}`, {
      body: {
        name: proxy.name,
        destination_url: target.url,
        request_transform: { code: 'module.exports = async (req) => {' },
      },
    });
    expectProblem(put, 422);
    expectProblem(await patchProxy(emu(), proxy.id, { request_transform: { code: 'module.exports = "nope";' } }), 422);

    expect((await emu().call<Proxy>('GET', `/proxies/${proxy.id}`)).body.request_transform).toEqual({
      code: versioned(1),
    });
    expect((await invoke(emu(), proxy.key, 'POST', { body: { x: 1 } })).status).toBe(200);
    expect(JSON.parse(target.single().body)).toEqual({ version: 1 });

    // A good update swaps the code in.
    expect((await patchProxy(emu(), proxy.id, { request_transform: { code: versioned(2) } })).status).toBe(204);
    await invoke(emu(), proxy.key, 'POST', { body: { x: 1 } });
    expect(JSON.parse(target.requests[1]!.body)).toEqual({ version: 2 });
  });

  it('needs proxy:create, proxy:read, proxy:update and proxy:delete (403 for a private key, 401 without a key)', async () => {
    const proxy = await createProxy(emu(), {});
    const key = emu().privateKey;
    const body = { name: unique('perm'), destination_url: 'http://127.0.0.1:9' };
    expectProblem(await emu().call('POST', '/proxies', { key, body }), 403, /proxy:create/);
    expectProblem(await emu().call('GET', '/proxies', { key }), 403, /proxy:read/);
    expectProblem(await emu().call('GET', `/proxies/${proxy.id}`, { key }), 403, /proxy:read/);
    expectProblem(await emu().call('PUT', `/proxies/${proxy.id}`, { key, body }), 403, /proxy:update/);
    expectProblem(await patchProxy(emu(), proxy.id, { name: 'x' }, { key }), 403, /proxy:update/);
    expectProblem(await emu().call('DELETE', `/proxies/${proxy.id}`, { key }), 403, /proxy:delete/);
    expectProblem(await emu().call('GET', '/proxies', { key: null }), 401);

    // A management key holding only proxy:read reads but does not write.
    const reader = await application(emu(), { type: 'management', permissions: ['proxy:read'] });
    expect((await emu().call('GET', `/proxies/${proxy.id}`, { key: reader.key })).status).toBe(200);
    expectProblem(await emu().call('POST', '/proxies', { key: reader.key, body }), 403, /proxy:create/);
    expectProblem(await emu().call('DELETE', `/proxies/${proxy.id}`, { key: reader.key }), 403, /proxy:delete/);
    expect((await emu().call<Proxy>('GET', `/proxies/${proxy.id}`)).body).toEqual(proxy);
  });
});

describe('proxy keys at rest', () => {
  it('are not stored in plaintext, and still select the proxy after a restart', async () => {
    const emu = await startEmulator();
    const target = await destination();
    const name = unique('at-rest');
    const proxy = await createProxy(emu, { name, destination_url: target.url });
    await emu.dispose();

    const files = await filesUnder(path.join(emu.dir, '.svc'));
    let persisted = false;
    for (const file of files) {
      const content = await readFile(file);
      expect(content.includes(proxy.key), `${file} holds the proxy key`).toBe(false);
      expect(content.includes(proxy.key.slice('proxy_local_'.length)), `${file} holds the proxy key`).toBe(false);
      if (content.includes(name)) persisted = true;
    }
    expect(persisted, 'the proxy was written to the store').toBe(true);

    const again = await startEmulator({ dir: emu.dir, managementKey: emu.managementKey, privateKey: emu.privateKey });
    expect((await again.call<Proxy>('GET', `/proxies/${proxy.id}`)).body.key).toBe(proxy.key);
    const invoked = await invoke(again, proxy.key);
    expect(invoked.status, invoked.text).toBe(200);
    expect(target.requests).toHaveLength(1);
  });
});

describe('invoking a proxy: what reaches the destination', () => {
  const emu = sharedEmulator();

  it.each([
    ['GET', 'header'],
    ['POST', 'query'],
    ['PUT', 'header'],
    ['PATCH', 'query'],
    ['DELETE', 'header'],
    ['GET', 'query'],
    ['DELETE', 'query'],
  ] as const)(
    '%s /proxy/<suffix> (key in the %s) reaches the destination with its method, path and query',
    async (method, keyIn) => {
      const target = await destination();
      const proxy = await createProxy(emu(), { destination_url: `${target.url}/base/` });
      const body = method === 'GET' || method === 'DELETE' ? undefined : { method };
      const result = await invoke(emu(), proxy.key, method, {
        path: '/v1/items/42?b=2&a=%20x+y&c=%E2%9C%93',
        keyIn,
        ...(body && { body }),
      });
      expect(result.status, result.text).toBe(200);
      const received = target.single();
      expect(received.method).toBe(method);
      expect(received.url).toBe('/base/v1/items/42?b=2&a=%20x+y&c=%E2%9C%93');
      expect(received.url).not.toContain(proxy.key);
      if (body) expect(JSON.parse(received.body)).toEqual(body);
      else expect(received.body).toBe('');
    },
  );

  it('the key as a query parameter is removed wherever it stands', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url });
    const result = await emu().call('GET', `/proxy/p?first=1&svc-proxy-key=${proxy.key}&last=2`, {
      key: emu().privateKey,
    });
    expect(result.status, result.text).toBe(200);
    expect(target.single().url).toBe('/p?first=1&last=2');
  });

  it("/proxy alone goes to the destination URL as it is, its own query before the caller's", async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: `${target.url}/base?api=1` });
    expect((await invoke(emu(), proxy.key)).status).toBe(200);
    expect((await invoke(emu(), proxy.key, 'GET', { path: '?x=2' })).status).toBe(200);
    expect((await invoke(emu(), proxy.key, 'GET', { path: '/more?x=3' })).status).toBe(200);
    expect(target.requests.map((request) => request.url)).toEqual([
      '/base?api=1',
      '/base?api=1&x=2',
      '/base/more?api=1&x=3',
    ]);
  });

  it('forwards a JSON body as sent', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url });
    const raw = '{ "amount": 12.50, "nested": {"list": [1, "two", null]}, "unicode": "é✓" }';
    const result = await invoke(emu(), proxy.key, 'POST', { raw, contentType: 'application/json' });
    expect(result.status, result.text).toBe(200);
    const received = target.single();
    expect(received.body).toBe(raw);
    expect(received.headers['content-type']).toBe('application/json');
    expect(received.headers['content-length']).toBe(String(Buffer.byteLength(raw)));
  });

  it.each([
    ['text/plain; charset=utf-8', 'plain text, not JSON: { "a": '],
    ['application/x-www-form-urlencoded', 'a=1&b=%20two+words&c=%E2%9C%93'],
    ['application/xml', '<charge><amount>1</amount></charge>'],
  ])('forwards a %s body unchanged', async (contentType, raw) => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url });
    expect((await invoke(emu(), proxy.key, 'PUT', { raw, contentType })).status).toBe(200);
    const received = target.single();
    expect(received.body).toBe(raw);
    expect(received.headers['content-type']).toBe(contentType);
  });

  it('forwards binary bytes unchanged', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url });
    // Every byte value, and random bytes (with no `{{` in them: see the report on binary bodies).
    const random = randomBytes(4096).map((byte) => (byte === 0x7b ? 0x7c : byte));
    const bytes = Buffer.concat([
      Buffer.from(Array.from({ length: 256 }, (_value, index) => index)),
      random,
      Buffer.from([0xff, 0xfe, 0x80]),
    ]);
    expect(
      (await invoke(emu(), proxy.key, 'POST', { raw: bytes, contentType: 'application/octet-stream' })).status,
    ).toBe(200);
    expect(target.single().bytes.equals(bytes)).toBe(true);
  });

  it("forwards the caller's headers in their case, Authorization included, without svc's own or invalid names", async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url });
    const result = await invoke(emu(), proxy.key, 'POST', {
      body: { a: 1 },
      headers: {
        Authorization: 'Bearer dest-secret',
        'X-Mixed-Case_Name': 'kept',
        'x-lower': 'low',
        'X.Dot': 'dropped',
        'X-Trace!': 'dropped',
      },
    });
    expect(result.status, result.text).toBe(200);
    const received = target.single();
    const names = namesOf(received);
    expect(names).toContain('Authorization');
    expect(names).toContain('X-Mixed-Case_Name');
    expect(names).toContain('x-lower');
    expect(received.headers.authorization).toBe('Bearer dest-secret');
    expect(received.headers['x-mixed-case_name']).toBe('kept');
    expect(names.map((name) => name.toLowerCase())).not.toContain('x.dot');
    expect(names.map((name) => name.toLowerCase())).not.toContain('x-trace!');
    expect(names.map((name) => name.toLowerCase())).not.toContain('svc-api-key');
    expect(names.map((name) => name.toLowerCase())).not.toContain('svc-proxy-key');
    expect(received.rawHeaders).not.toContain(emu().privateKey);
    expect(received.rawHeaders).not.toContain(proxy.key);
    // The Host is the destination's, not the emulator's.
    expect(received.headers.host).toBe(new URL(target.url).host);
  });

  it('joins a repeated header into one', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url });
    const socketResult = await rawProxyGet(emu(), proxy.key, ['X-Multi: one', 'x-multi: two']);
    expect(socketResult).toMatch(/^HTTP\/1\.1 200/);
    expect(target.single().headers['x-multi']).toBe('one, two');
  });

  it('a header name with a space never reaches the destination', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url });
    const socketResult = await rawProxyGet(emu(), proxy.key, ['X Space: 1']);
    // Node's HTTP parser refuses such a request outright.
    expect(socketResult).toMatch(/^HTTP\/1\.1 400/);
    expect(target.requests).toHaveLength(0);
  });
});

/** Sends a hand-written HTTP/1.1 request (for what clients refuse to send) and returns the raw answer. */
/** `GET /proxy` written on a socket as is (header names Node's client would refuse), with these header lines. */
function rawProxyGet(emu: TestEmulator, proxyKey: string, headerLines: string[]): Promise<string> {
  return rawRequest(emu.url, [
    'GET /proxy HTTP/1.1',
    `Host: ${new URL(emu.url).host}`,
    `SVC-PROXY-KEY: ${proxyKey}`,
    `SVC-API-KEY: ${emu.privateKey}`,
    ...headerLines,
    'Connection: close',
  ]);
}

async function rawRequest(base: string, lines: string[]): Promise<string> {
  const { hostname, port } = new URL(base);
  const socket = net.connect(Number(port), hostname);
  let answer = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (answer += chunk));
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  await new Promise((resolve) => socket.on('close', resolve));
  return answer;
}

describe('invoking a proxy: detokenization', () => {
  const emu = sharedEmulator();

  it('replaces a whole-string expression in JSON with the card object, an embedded one with its JSON text', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url });
    const card = await createToken(emu(), { type: 'card', data: CARD });
    const secret = await createToken(emu(), { type: 'token', data: 'sensitive-value' });
    const result = await invoke(emu(), proxy.key, 'POST', {
      body: {
        card: `{{ ${card.id} }}`,
        note: `card {{${card.id}}} end`,
        list: [`{{${secret.id}}}`, `x-{{ ${secret.id} }}-y`],
        untouched: '{ not an expression }',
      },
    });
    expect(result.status, result.text).toBe(200);
    const received = JSON.parse(target.single().body);
    expect(received.card).toMatchObject(CARD);
    expect(received.note).toBe(`card ${JSON.stringify(received.card)} end`);
    expect(received.list).toEqual(['sensitive-value', 'x-sensitive-value-y']);
    expect(received.untouched).toBe('{ not an expression }');
    expect(target.single().headers['content-length']).toBe(String(Buffer.byteLength(target.single().body)));
  });

  it('replaces expressions in a text body in place', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url });
    const secret = await createToken(emu(), { type: 'token', data: 'hunter2' });
    const card = await createToken(emu(), { type: 'card', data: CARD });
    const raw = `password={{ ${secret.id} }}&card={{${card.id}}}&keep=%7B`;
    expect((await invoke(emu(), proxy.key, 'POST', { raw, contentType: 'text/plain' })).status).toBe(200);
    const body = target.single().body;
    expect(body.startsWith('password=hunter2&card={')).toBe(true);
    const cardJson = body.slice('password=hunter2&card='.length, body.lastIndexOf('&keep='));
    expect(JSON.parse(cardJson)).toMatchObject(CARD);
    expect(body.endsWith('&keep=%7B')).toBe(true);
  });

  it('needs token:use on the container of each token (403 proxy_error), per access rules', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url });
    const generalOnly = await application(emu(), {
      type: 'private',
      rules: [
        {
          description: 'general only',
          priority: 1,
          container: '/general/',
          transform: 'reveal',
          permissions: ['token:use'],
        },
      ],
    });
    const card = await createToken(emu(), { type: 'card', data: CARD });
    const general = await createToken(emu(), { type: 'token', data: 'general-data' });

    const refused = await invoke(emu(), proxy.key, 'POST', {
      key: generalOnly.key,
      body: { card: `{{ ${card.id} }}` },
    });
    expectProxyError(refused, 403);
    expect(target.requests).toHaveLength(0);

    const allowed = await invoke(emu(), proxy.key, 'POST', {
      key: generalOnly.key,
      body: { value: `{{ ${general.id} }}` },
    });
    expect(allowed.status, allowed.text).toBe(200);
    expect(JSON.parse(target.single().body)).toEqual({ value: 'general-data' });
  });

  it('refuses an unknown token (400 proxy_error naming it); nothing is forwarded', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url });
    const result = await invoke(emu(), proxy.key, 'POST', { body: { card: '{{ no-such-token-42 }}' } });
    expectProxyError(result, 400, /no-such-token-42/);
    const text = await invoke(emu(), proxy.key, 'POST', { raw: 'x={{ other-missing }}', contentType: 'text/plain' });
    expectProxyError(text, 400, /other-missing/);
    expect(target.requests).toHaveLength(0);
  });
});

describe('invoking a proxy: authentication (spec 5)', () => {
  const emu = sharedEmulator();

  it('require_auth without SVC-API-KEY is 401 proxy_error, with an unknown key too', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url });
    expectProxyError(await invoke(emu(), proxy.key, 'GET', { key: null }), 401);
    expectProxyError(await invoke(emu(), proxy.key, 'GET', { key: 'key_local_pvt_1111111111111111111111' }), 401);
    expect(target.requests).toHaveLength(0);
  });

  it('a key without token:use is 403 even when nothing is detokenized', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url });
    expectProxyError(await invoke(emu(), proxy.key, 'GET', { key: emu().managementKey }), 403, /token:use/);
    const reader = await application(emu(), { type: 'private', permissions: ['token:read'] });
    expectProxyError(
      await invoke(emu(), proxy.key, 'POST', { key: reader.key, body: { plain: true } }),
      403,
      /token:use/,
    );
    expect(target.requests).toHaveLength(0);
  });

  it("another tenant's private key gets 404, as for an unknown proxy key", async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url });
    const other = await createTenant(emu(), unique('tenant'));
    const result = await invoke(emu(), proxy.key, 'GET', { key: other.private_key });
    expectProxyError(result, 404);
    expect(result.body.proxy_error.detail).toBe(
      (await invoke(emu(), 'proxy_local_unknownunknownunknownunkn')).body.proxy_error.detail,
    );
    expect(target.requests).toHaveLength(0);
  });

  it('require_auth false accepts anonymous callers and forwards', async () => {
    const target = await destination({ status: 201, body: 'made' });
    const proxy = await createProxy(emu(), { destination_url: target.url, require_auth: false });
    const result = await invoke(emu(), proxy.key, 'POST', {
      key: null,
      raw: 'hello',
      contentType: 'text/plain',
      keyIn: 'query',
    });
    expect(result.status, result.text).toBe(201);
    expect(result.text).toBe('made');
    expect(target.single().body).toBe('hello');
  });

  it("anonymous callers detokenize through the proxy's Application", async () => {
    const target = await destination();
    const app = await application(emu(), { type: 'private', permissions: ['token:use'] });
    const proxy = await createProxy(emu(), {
      destination_url: target.url,
      require_auth: false,
      application: { id: app.id },
    });
    const card = await createToken(emu(), { type: 'card', data: CARD });
    const result = await invoke(emu(), proxy.key, 'POST', { key: null, body: { card: `{{${card.id}}}` } });
    expect(result.status, result.text).toBe(200);
    expect(JSON.parse(target.single().body).card).toMatchObject(CARD);
  });

  it("anonymous callers are limited to the Application's rules", async () => {
    const target = await destination();
    const app = await application(emu(), {
      type: 'private',
      rules: [{ priority: 1, container: '/general/', transform: 'reveal', permissions: ['token:use'] }],
    });
    const proxy = await createProxy(emu(), {
      destination_url: target.url,
      require_auth: false,
      application: { id: app.id },
    });
    const card = await createToken(emu(), { type: 'card', data: CARD });
    expectProxyError(await invoke(emu(), proxy.key, 'POST', { key: null, body: { card: `{{${card.id}}}` } }), 403);
    expect(target.requests).toHaveLength(0);
  });

  it('without an Application, an anonymous expression is 403; plain bodies still go through', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url, require_auth: false });
    const card = await createToken(emu(), { type: 'card', data: CARD });
    expectProxyError(
      await invoke(emu(), proxy.key, 'POST', { key: null, body: { card: `{{${card.id}}}` } }),
      403,
      new RegExp(proxy.name),
    );
    expect(target.requests).toHaveLength(0);
    expect((await invoke(emu(), proxy.key, 'POST', { key: null, body: { card: 'none' } })).status).toBe(200);
    expect(target.requests).toHaveLength(1);
  });
});

describe('invoking a proxy: transforms', () => {
  const emu = sharedEmulator();

  it('the request transform gets {args: {body, headers, method, path, query}, configuration}; its {body, headers} is what the destination receives', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), {
      destination_url: `${target.url}/base`,
      request_transform: { code: REQUEST_ECHO },
      configuration: { greeting: 'hi' },
    });
    const card = await createToken(emu(), { type: 'card', data: CARD });
    const result = await invoke(emu(), proxy.key, 'POST', {
      path: '/v1/pay?x=1&y=%20z',
      keyIn: 'query',
      body: { amount: 5, card: `{{ ${card.id} }}` },
      headers: { 'X-Caller': 'c', Authorization: 'Bearer t' },
    });
    expect(result.status, result.text).toBe(200);
    const received = target.single();
    expect(received.url).toBe('/base/v1/pay?x=1&y=%20z');
    const sent = JSON.parse(received.body);
    expect(sent.configuration).toEqual({ greeting: 'hi' });
    expect(sent.svc).toBeNull();
    expect(sent.args).toMatchObject({ method: 'POST', path: '/v1/pay', query: '?x=1&y=%20z' });
    // Detokenized before the transform sees it, and parsed: JSON.
    expect(sent.args.body.amount).toBe(5);
    expect(sent.args.body.card).toMatchObject(CARD);
    expect(sent.args.headers).toMatchObject({
      'X-Caller': 'c',
      Authorization: 'Bearer t',
      'content-type': 'application/json',
    });
    const seenNames = Object.keys(sent.args.headers).map((name) => name.toLowerCase());
    expect(seenNames).not.toContain('svc-api-key');
    expect(seenNames).not.toContain('svc-proxy-key');

    // Only the headers the transform returned, a name the platform otherwise drops included.
    const names = namesOf(received);
    expect(names).toContain('X.Signed');
    expect(received.headers['x.signed']).toBe('sig-POST');
    expect(received.headers['x-greeting']).toBe('hi');
    expect(received.headers['x-caller']).toBeUndefined();
    expect(received.headers.authorization).toBeUndefined();
  });

  it('the request transform gets a string body when the type is not JSON, and its string is sent as is', async () => {
    const target = await destination();
    const code = source(
      'module.exports = async (req) => ({',
      "  body: typeof req.args.body + ':' + req.args.body.toUpperCase() + ':' + req.args.query + ':' + req.args.method,",
      "  headers: { 'Content-Type': 'text/plain', 'X-Path': req.args.path || '(none)' },",
      '});',
    );
    const proxy = await createProxy(emu(), { destination_url: target.url, request_transform: { code } });
    expect(
      (await invoke(emu(), proxy.key, 'PUT', { raw: 'a=1&b=two', contentType: 'application/x-www-form-urlencoded' }))
        .status,
    ).toBe(200);
    const received = target.single();
    expect(received.body).toBe('string:A=1&B=TWO::PUT');
    expect(received.headers['content-type']).toBe('text/plain');
    expect(received.headers['x-path']).toBe('(none)');
  });

  it('the response transform gets {args: {body, headers}} (JSON parsed); its {body, headers} is the response', async () => {
    const target = await destination({
      status: 202,
      headers: { 'X-Dest': 'd1' },
      body: JSON.stringify({ hello: 'world' }),
    });
    const proxy = await createProxy(emu(), {
      destination_url: target.url,
      response_transform: { code: RESPONSE_WRAP },
      configuration: { c: 'v' },
    });
    const result = await invoke(emu(), proxy.key);
    expect(result.status, result.text).toBe(202);
    expect(result.headers['svc-proxy-destination-status']).toBe('202');
    expect(result.headers['x-transformed']).toBe('yes');
    expect(result.headers['x-dest']).toBeUndefined();
    expect(result.body).toMatchObject({ wrapped: { hello: 'world' }, type: 'object', configuration: { c: 'v' } });
    expect(result.body.seen).toMatchObject({ 'x-dest': 'd1', 'content-type': 'application/json' });
    expect(JSON.parse(result.text)).toEqual(result.body);
  });

  it('the response transform gets a string body for a text answer', async () => {
    const target = await destination({ headers: { 'content-type': 'text/plain' }, body: 'plain answer' });
    const proxy = await createProxy(emu(), {
      destination_url: target.url,
      response_transform: { code: RESPONSE_WRAP },
    });
    const result = await invoke(emu(), proxy.key);
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ wrapped: 'plain answer', type: 'string' });
  });

  it("req.svc works in a transform with the proxy's Application", async () => {
    const target = await destination();
    const app = await application(emu(), { type: 'private', permissions: ['token:create', 'token:read', 'token:use'] });
    const code = source(
      'module.exports = async (req) => {',
      "  const token = await req.svc.tokens.create({ type: 'token', data: req.args.body.secret });",
      "  return { body: { token_id: token.id }, headers: { 'Content-Type': 'application/json' } };",
      '};',
    );
    const proxy = await createProxy(emu(), {
      destination_url: target.url,
      request_transform: { code },
      application: { id: app.id },
    });
    const result = await invoke(emu(), proxy.key, 'POST', { body: { secret: 'tokenized-in-transform' } });
    expect(result.status, result.text).toBe(200);
    const sent = JSON.parse(target.single().body);
    expect(Object.keys(sent)).toEqual(['token_id']);
    const token = await emu().call('POST', '/detokenize', {
      key: emu().privateKey,
      body: { value: `{{ ${sent.token_id} }}` },
    });
    expect(token.status, token.text).toBe(200);
    expect(token.body).toEqual({ value: 'tokenized-in-transform' });
  });

  it('a BadRequestError thrown by a transform is 400 proxy_error; nothing is forwarded', async () => {
    const target = await destination();
    const code = source("module.exports = async (req) => { throw new BadRequestError('amount is required'); };");
    const proxy = await createProxy(emu(), { destination_url: target.url, request_transform: { code } });
    const refused = await invoke(emu(), proxy.key, 'POST', { body: {} });
    // As the platform answers it: the class's text as detail, the message in errors.
    expectProxyError(refused, 400, /^Bad Request$/);
    expect(refused.body.proxy_error.errors).toEqual({ error: ['amount is required'] });
    expect(target.requests).toHaveLength(0);
  });

  it('a CustomHttpResponseError from a transform passes through as it is', async () => {
    const target = await destination();
    const code = source(
      'module.exports = async (req) => {',
      "  throw new CustomHttpResponseError({ status: 418, headers: { 'X-Teapot': 'short' }, body: { tea: 'earl grey' } });",
      '};',
    );
    const proxy = await createProxy(emu(), { destination_url: target.url, request_transform: { code } });
    const result = await invoke(emu(), proxy.key, 'POST', { body: {} });
    expect(result.status, result.text).toBe(418);
    expect(result.headers['x-teapot']).toBe('short');
    expect(result.body).toEqual({ tea: 'earl grey' });
    expect(result.headers['svc-proxy-destination-status']).toBeUndefined();
    expect(target.requests).toHaveLength(0);
  });

  it('refuses a payload over 5 MB to a proxy with a transform (413 proxy_error) and forwards it without one', async () => {
    const target = await destination();
    const payload = Buffer.alloc(FIVE_MB + 1, 'a');
    const transformed = await createProxy(emu(), {
      destination_url: target.url,
      request_transform: { code: versioned(1) },
    });
    expectProxyError(
      await invoke(emu(), transformed.key, 'POST', { raw: payload, contentType: 'text/plain' }),
      413,
      /5 MB/,
    );
    const responseOnly = await createProxy(emu(), {
      destination_url: target.url,
      response_transform: { code: RESPONSE_WRAP },
    });
    expectProxyError(await invoke(emu(), responseOnly.key, 'POST', { raw: payload, contentType: 'text/plain' }), 413);
    expect(target.requests).toHaveLength(0);

    const plain = await createProxy(emu(), { destination_url: target.url });
    const result = await invoke(emu(), plain.key, 'POST', { raw: payload, contentType: 'text/plain' });
    expect(result.status, result.text).toBe(200);
    const received = target.single();
    expect(received.bytes.length).toBe(payload.length);
    expect(received.bytes.equals(payload)).toBe(true);
  });

  it('reports each transform run as an invocation event', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url, request_transform: { code: versioned(3) } });
    const result = await invoke(emu(), proxy.key, 'POST', { body: {} });
    const traceId = result.headers['svc-trace-id'];
    const events = emu().events.filter((event) => event.type === 'invocation' && event.requestId === traceId);
    expect(events).toMatchObject([{ kind: 'transform', id: proxy.id, status: 200 }]);
  });
});

describe('invoking a proxy: responses', () => {
  const emu = sharedEmulator();

  it.each([200, 201, 404, 503])(
    'passes the destination status %i, headers and body back with SVC-PROXY-DESTINATION-STATUS',
    async (status) => {
      const body = JSON.stringify({ status, message: `answer ${status}` });
      const target = await destination({
        status,
        headers: { 'X-Dest-Custom': `custom-${status}`, 'Set-Cookie': ['a=1', 'b=2'] },
        body,
      });
      const proxy = await createProxy(emu(), { destination_url: target.url });
      const result = await invoke(emu(), proxy.key);
      expect(result.status).toBe(status);
      expect(result.headers['svc-proxy-destination-status']).toBe(String(status));
      expect(result.headers['x-dest-custom']).toBe(`custom-${status}`);
      expect(result.headers['set-cookie']).toEqual(['a=1', 'b=2']);
      expect(result.headers['content-type']).toBe('application/json');
      expect(result.text).toBe(body);
      expect(result.body).not.toHaveProperty('proxy_error');
    },
  );

  it('a destination answer shaped like a proxy error is still the destination’s (header present)', async () => {
    const target = await destination({ status: 400, body: JSON.stringify({ proxy_error: { status: 400 } }) });
    const proxy = await createProxy(emu(), { destination_url: target.url });
    const result = await invoke(emu(), proxy.key);
    expect(result.status).toBe(400);
    expect(result.headers['svc-proxy-destination-status']).toBe('400');
  });

  it('streams a large (2 MB) destination body through intact', async () => {
    const big = randomBytes(1024 * 1024).toString('hex');
    const target = await destination({ headers: { 'content-type': 'text/plain' }, body: big });
    const proxy = await createProxy(emu(), { destination_url: target.url });
    const result = await invoke(emu(), proxy.key);
    expect(result.status).toBe(200);
    expect(result.text.length).toBe(big.length);
    expect(createHash('sha256').update(result.text).digest('hex')).toBe(createHash('sha256').update(big).digest('hex'));
  });

  it('sends a small answer of known length in one piece', async () => {
    const server = createServer((_request, response) =>
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '14' }).end('{"small":true}'),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const proxy = await createProxy(emu(), {
      destination_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    });
    const result = await invoke(emu(), proxy.key);
    expect(result.body).toEqual({ small: true });
    expect(result.headers['content-length']).toBe('14');
    expect(result.headers['transfer-encoding']).toBeUndefined();
  });

  it('streams an answer without a length as it comes: an event stream is not held back', async () => {
    let finish!: () => void;
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n');
      finish = () => response.end('data: last\n\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const proxy = await createProxy(emu(), {
      destination_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    });
    const response = await undiciRequest(`${emu().url}/proxy`, {
      headers: { 'svc-proxy-key': proxy.key, 'svc-api-key': emu().privateKey },
    });
    const chunks = response.body[Symbol.asyncIterator]();
    // The first event arrives while the destination still holds the stream open.
    expect(Buffer.from((await chunks.next()).value as Buffer).toString()).toBe('data: first\n\n');
    finish();
    let rest = '';
    for (let next = await chunks.next(); !next.done; next = await chunks.next())
      rest += Buffer.from(next.value as Buffer).toString();
    expect(rest).toBe('data: last\n\n');
  });

  it('answers 502 proxy_error when the destination breaks off a small answer midway', async () => {
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      response.write('{"partial":');
      setTimeout(() => response.socket?.destroy(), 20);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const proxy = await createProxy(emu(), {
      destination_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    });
    expectProxyError(await invoke(emu(), proxy.key), 502, /broke off its answer/);
  });

  it('waits for a slow destination', async () => {
    const target = await destination({ delayMs: 300, body: '{"slow":true}' });
    const proxy = await createProxy(emu(), { destination_url: target.url });
    const started = Date.now();
    const result = await invoke(emu(), proxy.key);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(result.body).toEqual({ slow: true });
  });

  it('a destination that never answers does not hold up other calls', async () => {
    const target = await destination((request) =>
      request.url === '/hang' ? { never: true } : { body: '{"quick":true}' },
    );
    const proxy = await createProxy(emu(), { destination_url: target.url });
    const hanging = undiciRequest(`${emu().url}/proxy/hang`, {
      headers: { 'svc-proxy-key': proxy.key, 'svc-api-key': emu().privateKey },
      signal: AbortSignal.timeout(500),
    }).then(
      () => 'answered',
      () => 'aborted',
    );
    const quick = await invoke(emu(), proxy.key, 'GET', { path: '/quick' });
    expect(quick.body).toEqual({ quick: true });
    expect(await hanging).toBe('aborted');
    expect(target.requests.map((request) => request.url).sort()).toEqual(['/hang', '/quick']);
  });

  it('errors inside the proxy are {"proxy_error": problem} without SVC-PROXY-DESTINATION-STATUS', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url });

    expectProxyError(await invoke(emu(), 'proxy_local_xxxxxxxxxxxxxxxxxxxxxxxxxx'), 404, /No proxy has this key/);
    expectProxyError(await invoke(emu(), proxy.key, 'GET', { keyIn: 'none' }), 400, /SVC-PROXY-KEY/);
    expectProxyError(
      await invoke(emu(), proxy.key, 'POST', { body: { x: '{{ unknown_token }}' } }),
      400,
      /unknown_token/,
    );

    const failing = await createProxy(emu(), {
      destination_url: target.url,
      request_transform: { code: source("module.exports = async () => { throw new Error('kaput'); };") },
    });
    const failed = await invoke(emu(), failing.key, 'POST', { body: {} });
    expectProxyError(failed, 500);

    const badResult = await createProxy(emu(), {
      destination_url: target.url,
      response_transform: { code: source('module.exports = async () => 42;') },
    });
    expectProxyError(await invoke(emu(), badResult.key), 500, /must return an object/);
    expect(target.requests).toHaveLength(1); // only the call whose response transform failed

    const port = await closedPort();
    const unreachable = await createProxy(emu(), { destination_url: `http://127.0.0.1:${port}/x` });
    expectProxyError(await invoke(emu(), unreachable.key), 502, /connection refused/);
  });

  it('the unreachable destination answers 502 with the Enterprise headers too', async () => {
    const port = await closedPort();
    const proxy = await createProxy(emu(), { destination_url: `http://127.0.0.1:${port}` });
    expectProxyError(
      await invoke(emu(), proxy.key, 'GET', { headers: { 'SVC-PROXY-CONNECTION': 'keep-alive' } }),
      502,
      /connection refused/,
    );
  });
});

describe('invoking a proxy: reserved headers (Enterprise)', () => {
  const emu = sharedEmulator();

  it('SVC-PROXY-KEEP-ALIVE and SVC-PROXY-CONNECTION arrive as Keep-Alive and Connection', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: `${target.url}/base` });
    const result = await invoke(emu(), proxy.key, 'POST', {
      path: '/p?q=1',
      body: { a: 1 },
      headers: { 'SVC-PROXY-KEEP-ALIVE': 'timeout=5', 'SVC-PROXY-CONNECTION': 'keep-alive', 'X-Other': 'o' },
    });
    expect(result.status, result.text).toBe(200);
    expect(result.headers['svc-proxy-destination-status']).toBe('200');
    const received = target.single();
    expect(received.headers['keep-alive']).toBe('timeout=5');
    expect(received.headers.connection).toBe('keep-alive');
    const names = namesOf(received).map((name) => name.toLowerCase());
    expect(names).not.toContain('svc-proxy-keep-alive');
    expect(names).not.toContain('svc-proxy-connection');
    // The rest of the call is as without them.
    expect(received.url).toBe('/base/p?q=1');
    expect(JSON.parse(received.body)).toEqual({ a: 1 });
    expect(received.headers['x-other']).toBe('o');
  });

  it('a caller cannot set Keep-Alive or Connection directly', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url });
    const answer = await rawProxyGet(emu(), proxy.key, ['Keep-Alive: timeout=99']);
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(target.single().headers['keep-alive']).toBeUndefined();
    expect(target.single().headers.connection).not.toBe('close');
  });
});

describe('invoking a proxy: reserved headers on the standard tier', () => {
  const emu = sharedEmulator({ inMemory: true, tier: 'standard' });

  it('drops them, and says so in a warning event', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url });
    const result = await invoke(emu(), proxy.key, 'GET', {
      headers: { 'SVC-PROXY-KEEP-ALIVE': 'timeout=5', 'SVC-PROXY-CONNECTION': 'close' },
    });
    expect(result.status, result.text).toBe(200);
    const received = target.single();
    expect(received.headers['keep-alive']).toBeUndefined();
    expect(received.headers.connection).not.toBe('close');
    const names = namesOf(received).map((name) => name.toLowerCase());
    expect(names).not.toContain('svc-proxy-keep-alive');
    expect(names).not.toContain('svc-proxy-connection');
    const warnings = emu().events.filter(
      (event) => event.type === 'warning' && event.traceId === result.headers['svc-trace-id'],
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ message: expect.stringMatching(/Enterprise/) });
  });
});

describe('proxies and tenant isolation', () => {
  const emu = sharedEmulator();

  it('another tenant can neither see, change, delete nor invoke the proxy', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url, configuration: { owner: 'me' } });
    const other = await createTenant(emu(), unique('tenant'));
    const key = other.management_key;
    const body = { name: 'stolen', destination_url: 'http://127.0.0.1:9/steal' };

    expectProblem(await emu().call('GET', `/proxies/${proxy.id}`, { key }), 404);
    expectProblem(await emu().call('PUT', `/proxies/${proxy.id}`, { key, body }), 404);
    expectProblem(await patchProxy(emu(), proxy.id, { name: 'stolen' }, { key }), 404);
    expectProblem(await emu().call('DELETE', `/proxies/${proxy.id}`, { key }), 404);
    const listed = await emu().call<Page<Proxy>>('GET', `/proxies?id=${proxy.id}`, { key });
    expect(listed.body.data).toEqual([]);
    expectProxyError(await invoke(emu(), proxy.key, 'GET', { key: other.private_key }), 404);
    expect(target.requests).toHaveLength(0);

    expect((await emu().call<Proxy>('GET', `/proxies/${proxy.id}`)).body).toEqual(proxy);
    expect((await invoke(emu(), proxy.key)).status).toBe(200);
    expect(target.requests).toHaveLength(1);
  });
});

describe('bodies forwarded byte for byte', () => {
  it('leaves binary bytes that happen to contain "{{" untouched', async () => {
    const emu = await startEmulator({ inMemory: true });
    const dest = await destination();
    const proxy = await createProxy(emu, { destination_url: dest.url });
    const bytes = Buffer.from([0xff, 0xfe, 0x7b, 0x7b, 0x00, 0x80]);
    const result = await invoke(emu, proxy.key, 'POST', { raw: bytes, contentType: 'application/octet-stream' });
    expect(result.status).toBe(200);
    expect(dest.single().bytes.equals(bytes)).toBe(true);
  });

  it('changes a JSON body only where an expression stands: spacing and 20-digit numbers survive', async () => {
    const emu = await startEmulator({ inMemory: true });
    const dest = await destination();
    const proxy = await createProxy(emu, { destination_url: dest.url });
    const token = await createToken(emu, { type: 'token', data: 'secret-value' });
    const raw = `{ "id" : 12345678901234567890,  "price": 1.50, "t": "{{ ${token.id} }}", "note": "x {{${token.id}}} y", "{{ ${token.id} }}": 1 }`;
    const result = await invoke(emu, proxy.key, 'POST', { raw, contentType: 'application/json' });
    expect(result.status).toBe(200);
    expect(dest.single().body).toBe(
      `{ "id" : 12345678901234567890,  "price": 1.50, "t": "secret-value", "note": "x secret-value y", "{{ ${token.id} }}": 1 }`,
    );
    // with "{{" but no expression at all, not even re-serialized
    const plain = '{ "template": "{{ not a token }}" ,"n": 1.50 }';
    await invoke(emu, proxy.key, 'POST', { raw: plain, contentType: 'application/json' });
    expect(dest.requests[1]!.body).toBe(plain);
  });

  it('does not forward HEAD (not one of the five methods)', async () => {
    const emu = await startEmulator({ inMemory: true });
    const dest = await destination();
    const proxy = await createProxy(emu, { destination_url: dest.url });
    const result = await invoke(emu, proxy.key, 'HEAD');
    expect(result.status).toBe(404);
    expect(dest.requests).toHaveLength(0);
  });

  it('drops a deleted Application on the next patch instead of refusing it', async () => {
    const emu = await startEmulator({ inMemory: true });
    const app = await application(emu, { type: 'private', permissions: ['token:use'] });
    const proxy = await createProxy(emu, { application: { id: app.id } });
    expect((await emu.call('DELETE', `/applications/${app.id}`)).status).toBe(204);
    expect((await emu.call('GET', `/proxies/${proxy.id}`)).body.application_id).toBeNull();
    expect((await patchProxy(emu, proxy.id, { name: 'renamed' })).status).toBe(204);
    expect((await emu.call('GET', `/proxies/${proxy.id}`)).body).toMatchObject({
      name: 'renamed',
      application_id: null,
    });
  });
});
