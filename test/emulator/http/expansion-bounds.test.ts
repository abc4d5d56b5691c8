/**
 * Every expansion is bounded before it is built (issue 26, item 1). A few bytes of expressions can
 * stand for gigabytes of token data, and a 5 MB body can hold a million values: each attack here,
 * scaled down to run fast, would still have blown the emulator's heap or held its event loop
 * without the bound. Each asserts the refusal and that the emulator still answers /health.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Proxy, Reactor } from '../../../src/api/types.js';
import {
  createApplication,
  createToken,
  type HttpResult,
  sharedEmulator,
  type TestEmulator,
  unique,
} from '../../helpers/emulator.js';

const MB = 1024 * 1024;
/** Built, 1,000 occurrences of a 1 MB token are a gigabyte: past what one V8 string can hold. */
const OCCURRENCES = 1000;

const emu = sharedEmulator({ inMemory: true });

/** A token of `bytes` characters of data, made with the private key. */
async function bigToken(bytes: number): Promise<string> {
  return (await createToken(emu(), { type: 'token', data: 'x'.repeat(bytes) })).id;
}

/** `{{ id }}` repeated in one string. */
const repeated = (id: string, times = OCCURRENCES) => `{{ ${id} }}`.repeat(times);

function expectTooLarge(result: HttpResult, detail: RegExp = /over the 5 MB payload limit/): void {
  expect(result.status, result.text.slice(0, 500)).toBe(413);
  expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(result.body).toMatchObject({ type: 'urn:svc:problem:payload-too-large', status: 413 });
  expect(result.body.detail).toMatch(detail);
  expect(result.text.length).toBeLessThan(2000);
}

async function expectHealthy(): Promise<void> {
  const health = await emu().call('GET', '/health', { key: null });
  expect(health.status, health.text).toBe(200);
}

/** A loopback destination that counts what reaches it (nothing should). */
async function destination(): Promise<{ url: string; received: () => number }> {
  let received = 0;
  const server = createServer((request, response) => {
    received++;
    request.resume();
    request.on('end', () => response.end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received: () => received };
}

async function createReactor(e: TestEmulator, code: string, application?: { id: string }): Promise<Reactor> {
  const created = await e.call<Reactor>('POST', '/reactors', {
    body: { name: unique('reactor'), code, configuration: {}, ...(application && { application }) },
  });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

describe('detokenization output is bounded as it is built', () => {
  it('POST /detokenize: one string repeating a 1 MB token a thousand times is a 413', async () => {
    const id = await bigToken(MB);
    const [refused] = await Promise.all([
      emu().call('POST', '/detokenize', { key: emu().privateKey, body: { card: repeated(id) } }),
      expectHealthy(),
    ]);
    expectTooLarge(refused);
    await expectHealthy();
  });

  it('POST /detokenize: distinct tokens together over 5 MB are a 413; four times 1 MB is served', async () => {
    const [a, b] = [await bigToken(3 * MB), await bigToken(3 * MB)];
    const key = emu().privateKey;
    expectTooLarge(await emu().call('POST', '/detokenize', { key, body: { a: `{{${a}}}`, b: `{{${b}}}` } }));
    const id = await bigToken(MB);
    const served = await emu().call('POST', '/detokenize', { key, body: [`{{${id}}}`, repeated(id, 3)] });
    expect(served.status).toBe(200);
    expect(served.body[0]).toHaveLength(MB);
    expect(served.body[1]).toHaveLength(3 * MB);
  });

  it('a reactor call whose args repeat a 1 MB token is a 413 before the code runs', async () => {
    const id = await bigToken(MB);
    const reactor = await createReactor(emu(), 'module.exports = async function (req) { return { raw: "ran" }; };\n');
    const [refused] = await Promise.all([
      emu().call('POST', `/reactors/${reactor.id}/react`, {
        key: emu().privateKey,
        body: { args: { inline: repeated(id), whole: Array.from({ length: OCCURRENCES }, () => `{{${id}}}`) } },
      }),
      expectHealthy(),
    ]);
    expectTooLarge(refused);
    expect(refused.text).not.toContain('ran');
    await expectHealthy();
  });

  it('req.svc.detokenize: the reactor gets the refusal, the emulator stays up', async () => {
    const id = await bigToken(MB);
    const bound = await createApplication(emu(), { type: 'private', permissions: ['token:use'] });
    const code = [
      'module.exports = async function (req) {',
      `  const expressions = '{{ ${id} }}'.repeat(${OCCURRENCES});`,
      '  try {',
      '    await req.svc.detokenize({ expressions });',
      '    return { raw: { refused: false } };',
      '  } catch (error) {',
      '    return { raw: { refused: true, name: error.name, message: error.data.detail } };',
      '  }',
      '};',
      '',
    ].join('\n');
    const reactor = await createReactor(emu(), code, { id: bound.id });
    const result = await emu().call('POST', `/reactors/${reactor.id}/react`, { key: emu().privateKey, body: {} });
    expect(result.status, result.text.slice(0, 500)).toBe(200);
    expect(result.body.raw).toMatchObject({ refused: true, message: expect.stringMatching(/5 MB payload limit/) });
    await expectHealthy();
  });

  it('eight concurrent proxy calls repeating a token: each a 413 proxy_error, nothing forwarded', async () => {
    const id = await bigToken(MB);
    const target = await destination();
    const created = await emu().call<Proxy>('POST', '/proxies', {
      body: { name: unique('proxy'), destination_url: target.url },
    });
    expect(created.status, created.text).toBe(201);
    const call = (contentType: string, raw: string) =>
      emu().call('POST', '/proxy', {
        key: emu().privateKey,
        raw,
        contentType,
        headers: { 'svc-proxy-key': created.body.key },
      });
    const results = await Promise.all([
      ...Array.from({ length: 4 }, () => call('application/json', JSON.stringify({ card: repeated(id) }))),
      ...Array.from({ length: 4 }, () => call('text/plain', repeated(id))),
      expectHealthy(),
    ]);
    for (const result of results.slice(0, 8) as HttpResult[]) {
      expect(result.status, result.text.slice(0, 500)).toBe(413);
      expect(result.body.proxy_error).toMatchObject({ status: 413, type: 'urn:svc:problem:payload-too-large' });
      expect(result.body.proxy_error.detail).toMatch(/5 MB more than the body as sent/);
    }
    expect(target.received()).toBe(0);
    // Ten thousand expressions at most, whatever their tokens' size.
    const small = await createToken(emu(), { type: 'token', data: 'x' });
    const many = await call('text/plain', repeated(small.id, 10_001));
    expect(many.status, many.text.slice(0, 500)).toBe(400);
    expect(many.body.proxy_error.detail).toMatch(/At most 10,000 \{\{ \}\} expressions/);
    expect(target.received()).toBe(0);
    // Within the bounds a body grows as it did: 1 MB of token in a small body is forwarded.
    const forwarded = await call('text/plain', `card=${repeated(id, 1)}`);
    expect(forwarded.status, forwarded.text.slice(0, 500)).toBe(200);
    expect(target.received()).toBe(1);
  });
});

describe('an object of many keys (an attacker review)', () => {
  it('is a 413 counted before the parse, whatever the route, while /health answers', async () => {
    // 5 MB, 580,000 distinct keys: JSON.parse alone held the event loop over half a second.
    const wide = `{${Array.from({ length: 585_000 }, (_, i) => `"${i.toString(36)}":1`).join(',')}}`;
    const post = (path: string) =>
      emu().call('POST', path, { key: emu().privateKey, raw: wide, contentType: 'application/json' });
    const [tokenize, , detokenize, transactions] = await Promise.all([
      post('/tokenize'),
      expectHealthy(),
      post('/detokenize'),
      post('/transactions'),
    ]);
    for (const result of [tokenize, detokenize, transactions]) {
      expect(result.status, result.text.slice(0, 300)).toBe(413);
      expect(result.body.detail).toBe('The JSON body holds more than 20,000 distinct object keys.');
    }
  });
});

describe('a large proxied body with an expression (an attacker review)', () => {
  it('is refused before it is read whole: anonymous, at once; over 5 MB, a 413; /health answers meanwhile', async () => {
    const target = await destination();
    const created = await emu().call<Proxy>('POST', '/proxies', {
      body: { name: unique('proxy'), destination_url: target.url, require_auth: false },
    });
    expect(created.status, created.text).toBe(201);
    const call = (raw: string, key: string | null) =>
      emu().call('POST', '/proxy/a', {
        key,
        raw,
        contentType: 'application/json',
        headers: { 'svc-proxy-key': created.body.key },
      });
    // 24 MB of empty objects and one expression: it was parsed whole (3 GB, /health 4 s) before the 403.
    const huge = `[${Array(8_000_000).fill('{}').join(',')},"{{00000000-0000-0000-0000-000000000000}}"]`;
    const [anonymous, , keyed] = await Promise.all([call(huge, null), expectHealthy(), call(huge, emu().privateKey)]);
    for (const result of [anonymous, keyed]) {
      expect(result.status, result.text.slice(0, 300)).toBe(413);
      expect(result.body.proxy_error.detail).toMatch(/expressions to detokenize may be at most 5 MB/);
    }
    // Small, anonymous, with an expression and no Application: a 403 without a parse.
    const small = await call('{"card":"{{00000000-0000-0000-0000-000000000000}}"}', null);
    expect(small.status).toBe(403);
    // Large without expressions: forwarded as it is.
    const plain = await call(`[${Array(4_000_000).fill('1').join(',')}]`, null);
    expect(plain.status, plain.text.slice(0, 300)).toBe(200);
    expect(target.received()).toBe(1);
  });
});

describe('tokenize and validation do bounded work per request', () => {
  it('POST /tokenize with a million leaves is a 413 at once, while /health answers', async () => {
    // 2 MB of JSON: within the body limit, a million tokens to seal and store without the bound.
    const raw = `[${new Array(1_000_000).fill('0').join(',')}]`;
    const [refused] = await Promise.all([
      emu().call('POST', '/tokenize', { key: emu().privateKey, raw, contentType: 'application/json' }),
      expectHealthy(),
    ]);
    expectTooLarge(refused, /at most 10,000 tokens/);
    await expectHealthy();
  });

  it('counts tokens exactly, and the values around them too', async () => {
    const key = emu().privateKey;
    const before = await emu().call('GET', '/tokens?size=1', { key });
    const tokenize = (raw: string) => emu().call('POST', '/tokenize', { key, raw, contentType: 'application/json' });
    expectTooLarge(await tokenize(JSON.stringify({ a: new Array(10_001).fill(1) })), /at most 10,000 tokens/);
    expectTooLarge(await tokenize(`[${new Array(100_001).fill('[]').join(',')}]`), /at most 100,000 values/);
    expectTooLarge(await tokenize(`[${new Array(100_001).fill('null').join(',')}]`), /at most 100,000 values/);
    const after = await emu().call('GET', '/tokens?size=1', { key });
    expect(after.body.pagination.total_items).toBe(before.body.pagination.total_items);
  });

  it('a tokenize prepared in slices is still all or nothing', async () => {
    const key = emu().privateKey;
    const count = async () => (await emu().call('GET', '/tokens?size=1', { key })).body.pagination.total_items;
    const before = await count();
    const leaves = Array.from({ length: 1200 }, (_, i) => `value ${i}`);
    const refused = await emu().call('POST', '/tokenize', {
      key,
      body: { leaves, last: { type: 'card', data: { number: '1234' } } },
    });
    expect(refused.status, refused.text.slice(0, 500)).toBe(400);
    expect(Object.keys(refused.body.errors)).toContain('last.data.number');
    expect(Object.keys(refused.body.errors).every((field) => field.startsWith('last.'))).toBe(true);
    expect(await count()).toBe(before);
    const made = await emu().call('POST', '/tokenize', { key, body: { leaves } });
    expect(made.status, made.text.slice(0, 500)).toBe(201);
    expect(new Set(made.body.leaves).size).toBe(1200);
    expect(await count()).toBe(before + 1200);
  });

  it('a million-item permissions array is one field error, while /health answers', async () => {
    const raw = JSON.stringify({ name: unique('app'), type: 'private', permissions: new Array(1_000_000).fill(1) });
    const [refused] = await Promise.all([
      emu().call('POST', '/applications', { raw, contentType: 'application/json' }),
      expectHealthy(),
    ]);
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual({ permissions: ['must have at most 100 items'] });
    await expectHealthy();
  });

  it('rule conditions are bounded as permissions and rules are', async () => {
    const condition = { attribute: 'id', operator: 'equals', value: 'x' };
    const rule = { priority: 1, transform: 'reveal', permissions: ['token:use'], conditions: [] as unknown[] };
    rule.conditions = new Array(100_000).fill(condition);
    const refused = await emu().call('POST', '/applications', {
      body: { name: unique('app'), type: 'private', rules: [rule] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual({ 'rules[0].conditions': ['must have at most 100 items'] });
  });
});
