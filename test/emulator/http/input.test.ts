import { createServer } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  createApplication,
  createToken,
  sharedEmulator,
  unique,
  type HttpResult,
  type TestEmulator,
} from '../../helpers/emulator.js';

/** `[[[…]]]` nested `depth` levels around `inner`. */
const deepArray = (depth: number, inner = '') => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
/** `{"a":{"a":…}}` nested `depth` levels around `inner`. */
const deepObject = (depth: number, inner = '1') => `${'{"a":'.repeat(depth)}${inner}${'}'.repeat(depth)}`;

const NESTED = /nested deeper than 64 levels/;

function expectProblem(result: HttpResult, status: number, detail?: RegExp): void {
  expect(result.status, result.text).toBe(status);
  expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(result.body).toMatchObject({
    status,
    type: expect.any(String),
    title: expect.any(String),
    trace_id: expect.any(String),
  });
  if (detail) expect(result.body.detail).toMatch(detail);
}

/** A proxy call's own error: `{"proxy_error": problem}` (spec 4.3). */
function expectProxyError(result: HttpResult, status: number, detail?: RegExp): void {
  expect(result.status, result.text).toBe(status);
  expect(result.body.proxy_error).toMatchObject({ status, title: expect.any(String) });
  if (detail) expect(result.body.proxy_error.detail).toMatch(detail);
}

async function loopbackServer(answer: (body: string) => { type: string; body: string }): Promise<string> {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const { type, body: out } = answer(body);
      response.writeHead(200, { 'content-type': type, 'content-length': Buffer.byteLength(out) }).end(out);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A private Application that reads tokens revealed (the bootstrap key reads them masked). */
async function revealer(emu: TestEmulator): Promise<string> {
  const app = await createApplication(emu, {
    type: 'private',
    rules: [
      { priority: 1, container: '/', transform: 'reveal', permissions: ['token:create', 'token:read', 'token:delete'] },
    ],
  });
  return app.key;
}

async function createReactor(
  emu: TestEmulator,
  code: string,
  extra: Record<string, unknown> = {},
): Promise<{ id: string }> {
  const created = await emu.call('POST', '/reactors', {
    body: { name: unique('reactor'), configuration: {}, code, ...extra },
  });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

async function createProxy(emu: TestEmulator, body: Record<string, unknown>): Promise<{ key: string }> {
  const created = await emu.call('POST', '/proxies', { body: { name: unique('proxy'), require_auth: true, ...body } });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

describe('JSON nested past the limit', () => {
  const emu = sharedEmulator({ inMemory: true, syncTimeoutMs: 5000 });

  it('is a 400 in token data and mask, however deep, and 64 levels still pass', async () => {
    for (const depth of [65, 5000, 100_000]) {
      const data = await emu().call('POST', '/tokens', {
        key: emu().privateKey,
        raw: `{"type":"token","data":${deepArray(depth)}}`,
        contentType: 'application/json',
      });
      expectProblem(data, 400, NESTED);
      const mask = await emu().call('POST', '/tokens', {
        key: emu().privateKey,
        raw: `{"type":"token","data":"x","mask":${deepObject(depth)}}`,
        contentType: 'application/json',
      });
      expectProblem(mask, 400, NESTED);
    }
    // the body itself is one level: data holds 63 more
    const fits = await emu().call('POST', '/tokens', {
      key: await revealer(emu()),
      raw: `{"type":"token","data":${deepArray(63)}}`,
      contentType: 'application/json',
    });
    expect(fits.status, fits.text).toBe(201);
    expect(fits.body.data).toEqual(JSON.parse(deepArray(63)));
  });

  it('is a 400 in any JSON body: merge patches, reactor args, Application bodies', async () => {
    const reactor = await createReactor(emu(), 'module.exports = async (req) => ({ raw: req.args });');
    const invoked = await emu().call('POST', `/reactors/${reactor.id}/react`, {
      key: emu().privateKey,
      raw: `{"args":{"a":${deepArray(5000)}}}`,
      contentType: 'application/json',
    });
    expectProblem(invoked, 400, NESTED);
    const patched = await emu().call('PATCH', `/reactors/${reactor.id}`, {
      raw: `{"configuration":${deepObject(5000)}}`,
      contentType: 'application/merge-patch+json',
    });
    expectProblem(patched, 400, NESTED);
    const app = await emu().call('POST', '/applications', {
      raw: `{"name":"x","type":"private","permissions":${deepArray(5000)}}`,
      contentType: 'application/json',
    });
    expectProblem(app, 400, NESTED);
  });

  it('is a 400 when user code hands it to req.svc', async () => {
    const bound = await createApplication(emu(), {
      type: 'private',
      permissions: ['token:create', 'token:read', 'token:use'],
    });
    const reactor = await createReactor(
      emu(),
      [
        'module.exports = async (req) => {',
        '  let data = 1;',
        '  for (let i = 0; i < 5000; i++) data = [data];',
        "  try { await req.svc.tokens.create({ type: 'token', data }); } catch (error) { return { raw: { status: error.status, message: error.data.detail } }; }",
        "  return { raw: 'created' };",
        '};',
      ].join('\n'),
      { application: { id: bound.id } },
    );
    const result = await emu().call('POST', `/reactors/${reactor.id}/react`, { key: emu().privateKey, body: {} });
    expect(result.status, result.text).toBe(200);
    expect(result.body.raw).toMatchObject({ status: 400, message: expect.stringMatching(NESTED) });
  });

  it('is a 400 in a JSON proxy body that carries an expression', async () => {
    const token = await createToken(emu(), { type: 'token', data: 'secret' });
    const destination = await loopbackServer((body) => ({
      type: 'application/json',
      body: JSON.stringify({ received: body.length }),
    }));
    const proxy = await createProxy(emu(), { destination_url: destination });
    for (const depth of [65, 100_000]) {
      const raw = deepObject(depth, `"{{ ${token.id} }}"`);
      const result = await emu().call('POST', '/proxy', {
        key: emu().privateKey,
        headers: { 'svc-proxy-key': proxy.key },
        raw,
        contentType: 'application/json',
      });
      expectProxyError(result, 400, NESTED);
    }
    // without an expression the body is not walked: it passes through as it is
    const plain = await emu().call('POST', '/proxy', {
      key: emu().privateKey,
      headers: { 'svc-proxy-key': proxy.key },
      raw: deepArray(100_000),
      contentType: 'application/json',
    });
    expect(plain.status, plain.text).toBe(200);
    expect(plain.body).toEqual({ received: 200_000 });
  });

  it('is a 400 in a proxy body that meets a request transform, a 502 in an answer that meets a response transform', async () => {
    const echo = 'module.exports = async (req) => ({ body: req.args.body, headers: req.args.headers });';
    const destination = await loopbackServer((body) =>
      body === 'deep please'
        ? { type: 'application/json', body: deepArray(100_000) }
        : { type: 'application/json', body: '{"ok":true}' },
    );
    const request = await createProxy(emu(), { destination_url: destination, request_transform: { code: echo } });
    for (const depth of [65, 100_000]) {
      const result = await emu().call('POST', '/proxy', {
        key: emu().privateKey,
        headers: { 'svc-proxy-key': request.key },
        raw: deepArray(depth),
        contentType: 'application/json',
      });
      expectProxyError(result, 400, NESTED);
    }
    const response = await createProxy(emu(), { destination_url: destination, response_transform: { code: echo } });
    const answered = await emu().call('POST', '/proxy', {
      key: emu().privateKey,
      headers: { 'svc-proxy-key': response.key },
      raw: 'deep please',
      contentType: 'text/plain',
    });
    expectProxyError(answered, 502, NESTED);
  });

  it('is refused with a clear problem when a reactor or transform returns it (never a stack overflow)', async () => {
    const deep = 'let v = 1; for (let i = 0; i < 6000; i++) v = [v];';
    const reactor = await createReactor(emu(), `module.exports = async () => { ${deep} return { raw: v }; };`);
    const result = await emu().call('POST', `/reactors/${reactor.id}/react`, { key: emu().privateKey, body: {} });
    expectProblem(result, 400, NESTED);
    expect(result.body.title).toBe('Invalid result');
    // asynchronous: the result fails with that problem (it stayed pending forever)
    const hooks: string[] = [];
    const callback = await loopbackServer((body) => (hooks.push(body), { type: 'text/plain', body: '' }));
    const pending = await emu().call('POST', `/reactors/${reactor.id}/react`, {
      key: emu().privateKey,
      body: { callback_url: `${callback}/hook` },
    });
    expect(pending.status, pending.text).toBe(202);
    let polled: HttpResult | undefined;
    for (let i = 0; i < 200 && polled?.body.status !== 'failed'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      polled = await emu().call('GET', `/reactors/${reactor.id}/results/${pending.body.id}`, { key: emu().privateKey });
    }
    expect(polled?.body).toMatchObject({
      status: 'failed',
      error: { status: 400, title: 'Invalid result', detail: expect.stringMatching(NESTED) },
    });
    const destination = await loopbackServer(() => ({ type: 'application/json', body: '{}' }));
    const proxy = await createProxy(emu(), {
      destination_url: destination,
      response_transform: { code: `module.exports = async () => { ${deep} return { body: v, headers: {} }; };` },
    });
    const transformed = await emu().call('GET', '/proxy', {
      key: emu().privateKey,
      headers: { 'svc-proxy-key': proxy.key },
    });
    expectProxyError(transformed, 400, NESTED);
    expect(transformed.body.proxy_error.title).toBe('Invalid result');
    expect(emu().events.filter((event) => event.type === 'error')).toEqual([]);
  });
});

describe('token ids of up to 200 characters', () => {
  const emu = sharedEmulator();

  it('are read and deleted by id; longer ones are a 400 problem', async () => {
    const key = await revealer(emu());
    for (const length of [101, 150, 200]) {
      const id = `t${'x'.repeat(length - 1)}`;
      await createToken(emu(), { id, type: 'token', data: length });
      const read = await emu().call('GET', `/tokens/${id}`, { key });
      expect(read.status, read.text).toBe(200);
      expect(read.body).toMatchObject({ id, data: length });
      const deleted = await emu().call('DELETE', `/tokens/${id}`, { key: emu().privateKey });
      expect(deleted.status, deleted.text).toBe(204);
      expectProblem(await emu().call('GET', `/tokens/${id}`, { key: emu().privateKey }), 404);
    }
    expectProblem(await emu().call('GET', `/tokens/${'x'.repeat(201)}`, { key: emu().privateKey }), 400);
    // far past any id: the router's own limit, still a problem
    expectProblem(await emu().call('GET', `/tokens/${'x'.repeat(5000)}`, { key: emu().privateKey }), 414);
  });
});

describe('date-times', () => {
  const emu = sharedEmulator();

  it('with a leap second are a 400 naming the field', async () => {
    const leap = '2030-06-30T23:59:60Z';
    const app = await emu().call('POST', '/applications', {
      body: { name: 'leap', type: 'private', permissions: ['token:read'], expires_at: leap },
    });
    expectProblem(app, 400);
    expect(app.body.errors.expires_at).toEqual([expect.stringMatching(/date-time/)]);
    const token = await emu().call('POST', '/tokens', {
      key: emu().privateKey,
      body: { type: 'token', data: 'x', expires_at: leap },
    });
    expectProblem(token, 400);
    expect(token.body.errors.expires_at).toEqual([expect.stringMatching(/date-time/)]);
    const ok = await emu().call('POST', '/applications', {
      body: { name: 'fine', type: 'private', permissions: ['token:read'], expires_at: '2030-06-30T23:59:59+02:00' },
    });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.expires_at).toBe('2030-06-30T21:59:59.000Z');
  });
});

describe('JSON bodies are UTF-8', () => {
  const emu = sharedEmulator();
  const body = (text: Buffer) => Buffer.concat([Buffer.from('{"type":"token","data":"'), text, Buffer.from('"}')]);

  it('invalid UTF-8 is a 400, never stored as U+FFFD', async () => {
    for (const bytes of [[0xff, 0xfe], [0xc3], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
      const result = await emu().call('POST', '/tokens', {
        key: emu().privateKey,
        raw: body(Buffer.from([0x61, ...bytes, 0x62])),
        contentType: 'application/json',
      });
      expectProblem(result, 400, /UTF-8/);
    }
    const listed = await emu().call('GET', '/tokens?size=100', { key: emu().privateKey });
    expect(listed.text).not.toContain('\ufffd');
    // valid multi-byte text is kept exactly
    const text = 'é€😀 ☃';
    const kept = await emu().call('POST', '/tokens', {
      key: await revealer(emu()),
      raw: body(Buffer.from(text)),
      contentType: 'application/json',
    });
    expect(kept.status, kept.text).toBe(201);
    expect(kept.body.data).toBe(text);
  });

  it('a charset other than UTF-8 is a 415; utf-8 however spelled passes', async () => {
    for (const type of [
      'application/json; charset=latin1',
      'application/json;charset=ISO-8859-1',
      'application/json; charset=utf-16',
    ]) {
      const result = await emu().call('POST', '/tokens', {
        key: emu().privateKey,
        raw: '{"type":"token","data":"x"}',
        contentType: type,
      });
      expectProblem(result, 415, /UTF-8/);
    }
    for (const type of [
      'application/json; charset=utf-8',
      'application/json;charset=UTF8',
      'application/json; charset="utf-8"',
      'Application/JSON',
    ]) {
      const result = await emu().call('POST', '/tokens', {
        key: emu().privateKey,
        raw: '{"type":"token","data":"x"}',
        contentType: type,
      });
      expect(result.status, `${type}: ${result.text}`).toBe(201);
    }
  });
});

describe('content types', () => {
  const emu = sharedEmulator();

  it('application/merge-patch+json only on PATCH; text/plain and compressed bodies nowhere', async () => {
    const post = await emu().call('POST', '/tokens', {
      key: emu().privateKey,
      raw: '{"type":"token","data":"x"}',
      contentType: 'application/merge-patch+json',
    });
    expectProblem(post, 415, /application\/json/);
    const reactor = await createReactor(emu(), 'module.exports = async () => ({});');
    const put = await emu().call('PUT', `/reactors/${reactor.id}`, {
      raw: JSON.stringify({ name: 'r', code: 'module.exports = async () => ({});', configuration: {} }),
      contentType: 'application/merge-patch+json',
    });
    expectProblem(put, 415);
    const patch = await emu().call('PATCH', `/reactors/${reactor.id}`, {
      raw: '{"configuration":{"a":"b"}}',
      contentType: 'application/merge-patch+json',
    });
    expect(patch.status, patch.text).toBe(204);
    const text = await emu().call('POST', '/tokenize', {
      key: emu().privateKey,
      raw: 'card 4242',
      contentType: 'text/plain',
    });
    expectProblem(text, 415);
    const zipped = await emu().call('POST', '/tokens', {
      key: emu().privateKey,
      raw: gzipSync('{"type":"token","data":"x"}'),
      contentType: 'application/json',
      headers: { 'content-encoding': 'gzip' },
    });
    expectProblem(zipped, 415, /Content-Encoding gzip/);
  });
});

describe('page and size', () => {
  const emu = sharedEmulator();

  it('are whole numbers written in digits, within bounds; anything else is a 400 naming the parameter', async () => {
    for (const value of [
      '1e3',
      '0x10',
      '%205',
      '5%20',
      '+5',
      '5.0',
      '1.5',
      '99999999999999999999',
      '1000001',
      '-1',
      '0',
      '',
      'two',
      '1,2',
    ]) {
      for (const name of ['page', 'size']) {
        for (const path of ['/tokens', '/applications', '/reactors', '/proxies']) {
          const key = path === '/tokens' ? emu().privateKey : emu().managementKey;
          const result = await emu().call('GET', `${path}?${name}=${value}`, { key });
          expectProblem(result, 400);
          expect(Object.keys(result.body.errors), `${path}?${name}=${value}`).toEqual([name]);
        }
      }
    }
    expectProblem(await emu().call('GET', '/applications?size=101'), 400);
    const fine = await emu().call('GET', '/applications?page=2&size=100');
    expect(fine.status, fine.text).toBe(200);
    expect(fine.body.pagination).toMatchObject({ page_number: 2, page_size: 100 });
    const last = await emu().call('GET', '/applications?page=1000000');
    expect(last.status, last.text).toBe(200);
  });
});

describe('field names', () => {
  const emu = sharedEmulator();

  it('named like members of Object.prototype are reported like any other field', async () => {
    for (const name of ['constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
      const proxy = await emu().call('POST', '/proxies', {
        body: { name: 'x', destination_url: 'http://127.0.0.1:1', [name]: 1 },
      });
      expectProblem(proxy, 400);
      expect(proxy.body.errors, name).toEqual({ [name]: ['is not a known field'] });
      const tokenized = await emu().call('POST', '/tokenize', {
        key: emu().privateKey,
        body: { type: 'token', data: 1, [name]: 1 },
      });
      expectProblem(tokenized, 400);
      expect(Object.keys(tokenized.body.errors), name).toEqual([name]);
    }
  });
});
