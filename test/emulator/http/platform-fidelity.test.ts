import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  createApplication,
  createToken,
  type HttpResult,
  sharedEmulator,
  type TestEmulator,
  unique,
} from '../../helpers/emulator.js';

/**
 * Vendor code runs unchanged (issue 35, items 3, 4, 5 and 7): the platform's error package and its
 * answers, response transforms on 2xx answers only, `req.svc` as the client the platform injects,
 * and the explanation of a refusal user code chose.
 */
const source = (...lines: string[]) => `${lines.join('\n')}\n`;

async function reactor(emu: TestEmulator, code: string, application?: string): Promise<string> {
  const created = await emu.call('POST', '/reactors', {
    body: { name: unique('r'), code, configuration: {}, ...(application && { application: { id: application } }) },
  });
  expect(created.status, created.text).toBe(201);
  return created.body.id;
}

function react(emu: TestEmulator, id: string, args: unknown, key = emu.privateKey): Promise<HttpResult> {
  return emu.call('POST', `/reactors/${id}/react`, { key, body: { args } });
}

/** A loopback destination answering `status` with a JSON body that echoes what it was sent. */
async function destination(status: number): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      hits++;
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ echoed: Buffer.concat(chunks).toString() }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits };
}

async function proxy(emu: TestEmulator, body: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const created = await emu.call('POST', '/proxies', { body: { name: unique('p'), ...body } });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

describe('@svc/errors is the platform error package', () => {
  const emu = sharedEmulator();

  it.each([
    ['AuthenticationError', 401, 'Authentication Failed'],
    ['AuthorizationError', 403, 'Forbidden'],
    ['BadRequestError', 400, 'Bad Request'],
    ['InvalidPaymentMethodError', 402, 'Invalid Payment Method'],
    ['InvalidReactorConfigurationError', 400, 'Invalid Reactor Configuration'],
    ['RateLimitError', 429, 'Rate Limit Exceeded'],
    ['ReactorRuntimeError', 500, 'Reactor Runtime Error'],
    ['ServiceUnavailableError', 503, 'Service Unavailable'],
  ])('%s answers %i, its fixed text as detail and the message in errors', async (name, status, detail) => {
    const id = await reactor(
      emu(),
      `const { ${name} } = require('@svc/errors');\nmodule.exports = async () => { throw new ${name}('it went wrong'); };`,
    );
    const answer = await react(emu(), id, {});
    expect(answer.status, answer.text).toBe(status);
    expect(answer.body).toMatchObject({ status, detail, errors: { error: ['it went wrong'] } });
  });

  it('makes errors of the argument as the vendor SDK does: a string, an object per key, an array, an Error, nothing', async () => {
    const id = await reactor(
      emu(),
      source(
        'module.exports = async (req) => {',
        "  const given = { string: 'msg', object: { card: 'declined', amount: ['too big', 'odd'], nested: { a: 1 }, empty: '' },",
        "    array: ['one', 2, { three: 3 }], error: new TypeError('typed'), none: undefined }[req.args.kind];",
        '  throw new BadRequestError(given);',
        '};',
      ),
    );
    const errorsOf = async (kind: string) => (await react(emu(), id, { kind })).body.errors;
    expect(await errorsOf('string')).toEqual({ error: ['msg'] });
    expect(await errorsOf('object')).toEqual({
      card: ['declined'],
      amount: ['too big', 'odd'],
      nested: ['{"a":1}'],
      empty: ['Something went wrong. Please try again.'],
    });
    expect(await errorsOf('array')).toEqual({ error: ['one', '2', '{"three":3}'] });
    expect(await errorsOf('error')).toEqual({ error: ['typed'] });
    expect(await errorsOf('none')).toEqual({ error: ['Something went wrong. Please try again.'] });
  });

  it('exports the base class under both names, with toRFC7807; a subclass keeps its parent status', async () => {
    const id = await reactor(
      emu(),
      source(
        "const errors = require('@svc/errors');",
        'class Declined extends errors.InvalidPaymentMethodError {}',
        'module.exports = async (req) => {',
        "  if (req.args.kind === 'base') throw new errors.BasisTheoryReactorError({ message: 'Teapot', status: 418, errors: 'short' });",
        "  if (req.args.kind === 'sub') throw new Declined('no funds');",
        "  const e = new errors.ReactorRuntimeError('x');",
        '  return { raw: { same: errors.SvcReactorError === errors.BasisTheoryReactorError, rfc: e.toRFC7807(),',
        '    base: e instanceof errors.SvcReactorError, name: e.name } };',
        '};',
      ),
    );
    expect((await react(emu(), id, {})).body.raw).toEqual({
      same: true,
      rfc: { detail: 'Reactor Runtime Error', status: 500, errors: { error: ['x'] } },
      base: true,
      name: 'ReactorRuntimeError',
    });
    const base = await react(emu(), id, { kind: 'base' });
    expect(base.status).toBe(418);
    expect(base.body).toMatchObject({ detail: 'Teapot', errors: { error: ['short'] } });
    const sub = await react(emu(), id, { kind: 'sub' });
    expect(sub.status).toBe(402);
    expect(sub.body).toMatchObject({ detail: 'Invalid Payment Method', errors: { error: ['no funds'] } });
  });

  it('CustomHttpResponseError checks its status as the vendor class does and answers exactly what it holds', async () => {
    const id = await reactor(
      emu(),
      source(
        'module.exports = async (req) => {',
        "  if (req.args.bad) throw new CustomHttpResponseError({ status: '200' });",
        '  const e = new CustomHttpResponseError({ status: 202 });',
        '  throw new CustomHttpResponseError({ status: 409, headers: { "x-why": "dup" }, body: e.toResponseBody() });',
        '};',
      ),
    );
    const answer = await react(emu(), id, {});
    expect(answer.status).toBe(409);
    expect(answer.headers['x-why']).toBe('dup');
    expect(answer.body).toEqual({ status: 202, headers: {}, body: {} });
    const bad = await react(emu(), id, { bad: true });
    expect(bad.status).toBe(500);
    expect(bad.body.detail).toMatch(/Error: status is not a valid integer$/);
  });

  it('a transform that throws answers the same shape inside proxy_error', async () => {
    const target = await destination(200);
    const code =
      "module.exports = async () => { throw new AuthenticationError('MY-CUSTOM-API-KEY header is required'); };";
    const created = await proxy(emu(), { destination_url: target.url, request_transform: { code } });
    const answer = await emu().call('POST', '/proxy', {
      key: emu().privateKey,
      headers: { 'svc-proxy-key': created.key },
      body: {},
    });
    expect(answer.status).toBe(401);
    expect(answer.body.proxy_error).toMatchObject({
      status: 401,
      detail: 'Authentication Failed',
      errors: { error: ['MY-CUSTOM-API-KEY header is required'] },
    });
    expect(target.hits()).toBe(0);
  });
});

describe('a refusal user code chose is explained as one (item 7)', () => {
  const emu = sharedEmulator();

  it('a reactor: the caller is authenticated, named, and the code refused', async () => {
    const caller = await createApplication(emu(), {
      name: unique('caller'),
      type: 'private',
      permissions: ['token:use'],
    });
    const id = await reactor(emu(), "module.exports = async () => { throw new AuthenticationError('who?'); };");
    const answer = await react(emu(), id, {}, caller.key);
    expect(answer.status).toBe(401);
    expect(answer.body.explanation).toMatchObject({
      decision: 'denied',
      application: { id: caller.id, name: caller.name, type: 'private' },
      reason: expect.stringMatching(/^Reactor .* refused the call: its code threw a 401 \(Authentication Failed\)\.$/),
    });
  });

  it('a transform of a proxy that requires auth names the caller; an anonymous one names none', async () => {
    const target = await destination(200);
    const code = "module.exports = async () => { throw new AuthorizationError('not you'); };";
    const guarded = await proxy(emu(), { destination_url: target.url, request_transform: { code } });
    const caller = await createApplication(emu(), {
      name: unique('caller'),
      type: 'private',
      permissions: ['token:use'],
    });
    const answer = await emu().call('POST', '/proxy', {
      key: caller.key,
      headers: { 'svc-proxy-key': guarded.key },
      body: {},
    });
    expect(answer.status).toBe(403);
    expect(answer.body.proxy_error.explanation).toMatchObject({
      decision: 'denied',
      application: { id: caller.id, name: caller.name },
      reason: expect.stringMatching(/^The request transform of proxy .* refused the call: its code threw a 403/),
    });

    const open = await proxy(emu(), { destination_url: target.url, request_transform: { code }, require_auth: false });
    const anonymous = await emu().call('POST', '/proxy', {
      key: null,
      headers: { 'svc-proxy-key': open.key },
      body: {},
    });
    expect(anonymous.status).toBe(403);
    expect(anonymous.body.proxy_error.explanation).toMatchObject({
      decision: 'denied',
      application: null,
      reason: expect.stringMatching(/the caller sent no key, as the proxy allows\.$/),
    });
  });
});

describe('response transforms run on 2xx answers only (item 4)', () => {
  const emu = sharedEmulator();
  const MARK = source(
    'module.exports = async (req) => ({ headers: req.args.headers, body: { transformed: true, was: req.args.body } });',
  );

  it('a 2xx answer is transformed; a 404 or a 500 passes through as the destination gave it', async () => {
    for (const [status, transformed] of [
      [200, true],
      [201, true],
      [404, false],
      [500, false],
    ] as const) {
      const target = await destination(status);
      const created = await proxy(emu(), { destination_url: target.url, response_transform: { code: MARK } });
      const answer = await emu().call('POST', '/proxy', {
        key: emu().privateKey,
        headers: { 'svc-proxy-key': created.key },
        body: { n: status },
      });
      expect(answer.status).toBe(status);
      expect(answer.headers['svc-proxy-destination-status']).toBe(String(status));
      if (transformed) expect(answer.body).toEqual({ transformed: true, was: { echoed: `{"n":${status}}` } });
      else expect(answer.body).toEqual({ echoed: `{"n":${status}}` });
    }
  });

  it('the leak guard still reads an answer that passed through', async () => {
    const target = await destination(404);
    const created = await proxy(emu(), { destination_url: target.url, response_transform: { code: MARK } });
    const ssn = await createToken(emu(), { type: 'token', data: '123-45-6789' });
    const before = emu().events.filter((event) => event.type === 'leak').length;
    const answer = await emu().call('POST', '/proxy', {
      key: emu().privateKey,
      headers: { 'svc-proxy-key': created.key },
      body: { ssn: `{{ ${ssn.id} }}` },
    });
    expect(answer.status).toBe(404);
    await expect
      .poll(() => emu().events.filter((event) => event.type === 'leak').length, { timeout: 10_000 })
      .toBeGreaterThan(before);
  });
});

describe('req.svc is the client the platform injects (item 5)', () => {
  const emu = sharedEmulator();

  it('takes camelCase and snake_case fields, returns tokens camelCased with data and metadata as given', async () => {
    const bound = await createApplication(emu(), {
      name: unique('bound'),
      type: 'private',
      permissions: ['token:create', 'token:read', 'token:use', 'token:delete'],
    });
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const id = await reactor(
      emu(),
      source(
        'module.exports = async (req) => {',
        '  const camel = await req.svc.tokens.create({ type: "token", data: { first_name: "Ada", lastName: "L" },',
        '    metadata: { orderId: "o-1", customer_id: "c-1" }, expiresAt: req.args.expires,',
        '    fingerprintExpression: "{{ data.first_name }}", deduplicateToken: false, searchIndexes: ["{{ data.lastName }}"] });',
        '  const snake = await req.svc.tokens.create({ type: "token", data: "x", expires_at: req.args.expires });',
        '  const read = await req.svc.tokens.retrieve(camel.id);',
        '  const page = await req.svc.tokens.list({ size: 100 });',
        '  let missing;',
        '  try { await req.svc.tokens.retrieve("00000000-0000-4000-8000-000000000000"); } catch (e) {',
        '    missing = { name: e.name, status: e.status, message: e.message, type: e.data.type, api: e instanceof SvcApiError }; }',
        '  const revealed = await req.svc.detokenize({ d: "{{ " + camel.id + " }}" });',
        '  return { raw: { camel, revealed, snake: Object.keys(snake).sort(), read: Object.keys(read).sort(), readData: read.data,',
        '    pagination: Object.keys(page.pagination).sort(), listed: page.data.some((t) => t.id === camel.id && t.createdAt), missing } };',
        '};',
      ),
      bound.id,
    );
    const answer = await react(emu(), id, { expires });
    expect(answer.status, answer.text).toBe(200);
    const { camel, snake, read, readData, pagination, listed, missing } = answer.body.raw;
    expect(readData).toBeUndefined();
    // Its data as the code sent it, keys untouched.
    expect(answer.body.raw.revealed).toEqual({ d: { first_name: 'Ada', lastName: 'L' } });
    expect(camel).toMatchObject({
      type: 'token',
      metadata: { orderId: 'o-1', customer_id: 'c-1' },
      expiresAt: expires,
      tenantId: emu().tenantId,
      createdAt: expect.any(String),
    });
    expect(camel).not.toHaveProperty('expires_at');
    expect(snake).toEqual(expect.arrayContaining(['createdAt', 'expiresAt', 'tenantId']));
    expect(read).toEqual(expect.arrayContaining(snake));
    expect(pagination.every((key: string) => !key.includes('_'))).toBe(true);
    expect(listed).toBe(true);
    expect(missing).toEqual({
      name: 'SvcApiError',
      status: 404,
      message: 'Request failed with status code 404',
      type: 'urn:svc:problem:not-found',
      api: true,
    });
  });

  it('vendor code that branches on e.status answers its own 400', async () => {
    const bound = await createApplication(emu(), {
      name: unique('bound'),
      type: 'private',
      permissions: ['token:read'],
    });
    const id = await reactor(
      emu(),
      source(
        'module.exports = async (req) => {',
        '  try { return { raw: await req.svc.tokens.retrieve(req.args.id) }; }',
        '  catch (e) { if (e.status === 404) throw new BadRequestError("Token not found"); throw e; }',
        '};',
      ),
      bound.id,
    );
    const answer = await react(emu(), id, { id: '00000000-0000-4000-8000-000000000000' });
    expect(answer.status, answer.text).toBe(400);
    expect(answer.body.errors).toEqual({ error: ['Token not found'] });
  });
});
