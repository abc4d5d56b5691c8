import { packageVersion } from '../../../src/lib/package-version.js';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import path from 'node:path';
import { createEmulator, type EmulatorEvent } from '../../../src/emulator/index.js';
import { nodeFileSystem } from '../../../src/lib/durable-file.js';
import { Exchange } from '../../../src/emulator/http/lean/exchange.js';
import { sharedEmulator, type TestEmulator } from '../../helpers/emulator.js';
import { tempDir } from '../../helpers/temp.js';
import { eventually } from '../../helpers/wait.js';

/**
 * The lean routes (http/lean/) answer as fastify's routes do. Two emulators, one with the lean
 * path and one without (`leanRoutes: false`: fastify answers everything), get the same requests;
 * their answers must be the same: status, every header but Date, and the body byte for byte (a
 * few fields that differ between two emulators by nature, such as generated ids, are set aside).
 * Each request is also checked to have been answered by the lean path on the first emulator, so
 * that a lean route quietly handing everything to fastify cannot pass.
 */

const KEYS = { managementKey: 'lean-test-management-key-1', privateKey: 'lean-test-private-key-00001' } as const;
const TRACE = 'lean-compare-trace';
const JSON_TYPE = 'application/json';
/** A reactor id no reactor has (valid as an id). */
const NO_REACTOR = '00000000-0000-4000-8000-000000000000';

const lean = sharedEmulator({ inMemory: true, ...KEYS });
const full = sharedEmulator({ inMemory: true, ...KEYS, leanRoutes: false });

interface Sent {
  key?: string | null;
  body?: string | Buffer;
  headers?: Record<string, string>;
}

interface Seen {
  status: number;
  headers: Record<string, unknown>;
  text: string;
  /** Whether the lean path wrote the answer. */
  lean: boolean;
  /** The request's log line. */
  event: Omit<Extract<EmulatorEvent, { type: 'request' }>, 'time' | 'ms' | 'tenantId'> & { tenant: boolean };
}

/** Counts the answers the lean path writes (every one goes through one of these). */
const answered = { count: 0 };
beforeAll(() => {
  const prototype = Exchange.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const method of ['write', 'stream']) {
    const original = prototype[method]!;
    vi.spyOn(prototype, method).mockImplementation(function (this: unknown, ...args: unknown[]) {
      answered.count++;
      return original.apply(this, args);
    });
  }
});
afterAll(() => {
  vi.restoreAllMocks();
});

async function send(emu: TestEmulator, method: string, path: string, sent: Sent): Promise<Seen> {
  const headers: Record<string, string> = { 'svc-trace-id': TRACE, ...sent.headers };
  const key = sent.key === undefined ? KEYS.privateKey : sent.key;
  if (key !== null) headers['svc-api-key'] = key;
  const before = answered.count;
  const events = emu.events.length;
  const response = await request(emu.url + path, { method: method as never, headers, body: sent.body });
  const text = await response.body.text();
  // The log line is written once the answer is (fastify's onResponse).
  await vi.waitFor(() => expect(emu.events.slice(events).some((event) => event.type === 'request')).toBe(true));
  const event = emu.events.slice(events).find((entry) => entry.type === 'request') as Extract<
    EmulatorEvent,
    { type: 'request' }
  >;
  const { date: _date, ...rest } = response.headers;
  return {
    status: response.statusCode,
    headers: rest,
    text,
    lean: answered.count > before,
    event: {
      type: 'request',
      method: event.method,
      path: event.path,
      status: event.status,
      traceId: event.traceId,
      tenant: event.tenantId !== undefined,
    },
  };
}

/**
 * Sends the same request to both emulators (paths may differ where an id does) and compares the
 * answers. `leftToFastify`: a request the lean path hands to fastify before reading it (a
 * Content-Type fastify refuses, a body over the limit), answered by fastify on both.
 */
async function compare(
  method: string,
  paths: string | [string, string],
  sent: Sent = {},
  normalize: (text: string) => string = (text) => text,
  leftToFastify = false,
) {
  const [leanPath, fullPath] = typeof paths === 'string' ? [paths, paths] : paths;
  const viaLean = await send(lean(), method, leanPath, sent);
  const viaFastify = await send(full(), method, fullPath, sent);
  expect(viaLean.lean, `${method} ${leanPath}: answered by ${viaLean.lean ? 'the lean path' : 'fastify'}`).toBe(
    !leftToFastify,
  );
  expect(viaFastify.lean).toBe(false);
  const comparable = (seen: Seen, path: string) => ({
    status: seen.status,
    headers: seen.headers,
    body: normalize(seen.text),
    event: { ...seen.event, path: seen.event.path.replace(path.split('?')[0]!, '<path>') },
  });
  expect(comparable(viaLean, leanPath)).toEqual(comparable(viaFastify, fullPath));
  return viaLean;
}

/** Fields two emulators differ in by nature (generated ids, times), set to a placeholder. */
const stable = (text: string) =>
  text
    .replace(/"(tenant_id|created_by|modified_by|created_at|modified_at)":"[^"]*"/g, '"$1":"<varies>"')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>');

/** The cases the lean path leaves to fastify: Content-Types fastify refuses (415), a body over the limit (413). */
const LEFT_TO_FASTIFY = /another Content-Type|merge patch on POST|no Content-Type \(415\)|over 5 MB/;

const json = (value: unknown) => ({ body: JSON.stringify(value), headers: { 'content-type': JSON_TYPE } });

describe('GET /tokens/{id} on the lean path answers as fastify does', () => {
  beforeAll(async () => {
    for (const emu of [lean(), full()]) {
      const created = await emu.call('POST', '/tokens', {
        key: KEYS.privateKey,
        body: { id: 'lean-token-1', type: 'token', data: { note: 'x' } },
      });
      expect(created.status, created.text).toBe(201);
    }
  });

  it.each([
    ['a token', '/tokens/lean-token-1', {}],
    ['a token, with a query string', '/tokens/lean-token-1?x=1', {}],
    ['no key (401)', '/tokens/lean-token-1', { key: null }],
    ['an empty key (401)', '/tokens/lean-token-1', { key: '' }],
    ['an unknown key (401)', '/tokens/lean-token-1', { key: 'key_local_pvt_notakeyatallnotakeyat' }],
    ['a management key, which holds no token permission (403)', '/tokens/lean-token-1', { key: KEYS.managementKey }],
    ['an unknown token (404)', '/tokens/no-such-token', {}],
    ['an id the schema refuses (400)', '/tokens/-starts-badly', {}],
    ['an id over 200 characters (400)', `/tokens/${'a'.repeat(201)}`, {}],
    [
      'an unknown transaction (SVC-TRANSACTION-ID)',
      '/tokens/lean-token-1',
      { headers: { 'svc-transaction-id': 'nope' } },
    ],
  ] as [string, string, Sent][])('%s', async (_name, path, sent) => {
    await compare('GET', path, sent, stable);
  });
});

describe('POST /tokens on the lean path answers as fastify does', () => {
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
  it.each([
    ['a token with its own id', { ...json({ id: 'lean-made-1', type: 'token', data: 'v' }) }],
    [
      'a card (validated, masked)',
      json({ type: 'card', data: { number: '4242424242424242', expiration_month: 12, expiration_year: 2099 } }),
    ],
    ['an id already taken (400)', json({ id: 'lean-made-1', type: 'token', data: 'v' })],
    ['no key (401)', { key: null, ...json({ type: 'token', data: 'v' }) }],
    ['a management key (403)', { key: KEYS.managementKey, ...json({ type: 'token', data: 'v' }) }],
    [
      'malformed JSON (400, connection closed)',
      { body: '{"type":"token","data":', headers: { 'content-type': JSON_TYPE } },
    ],
    ['an empty JSON body (400)', { body: '', headers: { 'content-type': JSON_TYPE } }],
    [
      'JSON with __proto__ (400)',
      { body: '{"type":"token","data":{"__proto__":{"x":1}}}', headers: { 'content-type': JSON_TYPE } },
    ],
    [
      'JSON with an escaped __proto__ (400)',
      { body: '{"type":"token","data":{"\\u005f_proto__":{"x":1}}}', headers: { 'content-type': JSON_TYPE } },
    ],
    [
      'JSON with constructor.prototype (400)',
      { body: '{"type":"token","data":{"constructor":{"prototype":{"x":1}}}}', headers: { 'content-type': JSON_TYPE } },
    ],
    [
      'JSON that only mentions them (accepted)',
      { body: '{"type":"token","data":"a __proto__ and a constructor"}', headers: { 'content-type': JSON_TYPE } },
    ],
    [
      'bytes that are not UTF-8 (400)',
      { body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]), headers: { 'content-type': JSON_TYPE } },
    ],
    [
      'a charset other than UTF-8 (415)',
      { body: '{}', headers: { 'content-type': 'application/json; charset=latin1' } },
    ],
    ['a Content-Encoding (415)', { body: '{}', headers: { 'content-type': JSON_TYPE, 'content-encoding': 'gzip' } }],
    [
      'charset=utf-8 (accepted)',
      {
        body: JSON.stringify({ type: 'token', data: 'u' }),
        headers: { 'content-type': 'application/json; charset=utf-8' },
      },
    ],
    ['another Content-Type (415)', { body: 'type=token', headers: { 'content-type': 'text/plain' } }],
    ['a merge patch on POST (415)', { body: '{}', headers: { 'content-type': 'application/merge-patch+json' } }],
    ['a body and no Content-Type (415)', { body: '{"type":"token"}' }],
    ['no body at all (400)', {}],
    ['JSON null (400)', { body: 'null', headers: { 'content-type': JSON_TYPE } }],
    ['a body the schema refuses (400 with errors)', json({ type: 'nope', data: 'v', extra: true })],
    ['JSON nested past the limit (400)', { body: nested(200), headers: { 'content-type': JSON_TYPE } }],
    [
      'a body over 5 MB (413)',
      {
        body: JSON.stringify({ type: 'token', data: 'x'.repeat(5 * 1024 * 1024) }),
        headers: { 'content-type': JSON_TYPE },
      },
    ],
  ] as [string, Sent][])('%s', async (name, sent) => {
    const seen = await compare('POST', '/tokens', sent, stable, LEFT_TO_FASTIFY.test(name));
    if (name.includes('connection closed')) expect(seen.headers.connection).toBe('close');
  });
});

describe('POST /reactors/{id}/react on the lean path answers as fastify does', () => {
  const ids = new Map<TestEmulator, Record<string, string>>();
  const CODE = {
    sums: 'module.exports = async (req) => ({ raw: { total: req.args.items.reduce((s, i) => s + i, 0), configuration: req.configuration } });',
    custom:
      "const { CustomHttpResponseError } = require('@svc/errors');\nmodule.exports = async () => { throw new CustomHttpResponseError({ status: 418, headers: { 'x-teapot': 'yes', 'Content-Type': 'text/x-tea' }, body: 'short and stout' }); };",
    refuses:
      "const { BadRequestError } = require('@svc/errors');\nmodule.exports = async () => { throw new BadRequestError('no items'); };",
    bad: 'module.exports = async () => 42;',
  };
  beforeAll(async () => {
    for (const emu of [lean(), full()]) {
      const made: Record<string, string> = {};
      for (const [name, code] of Object.entries(CODE)) {
        const created = await emu.call('POST', '/reactors', {
          body: { name: `lean-${name}`, code, configuration: { region: 'eu' } },
        });
        expect(created.status, created.text).toBe(201);
        made[name] = created.body.id;
      }
      ids.set(emu, made);
    }
  });
  const paths = (name: string): [string, string] => [
    `/reactors/${ids.get(lean())![name]}/react`,
    `/reactors/${ids.get(full())![name]}/react`,
  ];

  it.each([
    ['a result', 'sums', json({ args: { items: [1, 2, 3] } })],
    ['a custom response the code threw, as it is', 'custom', json({ args: {} })],
    ['an error class of the platform (400)', 'refuses', json({ args: {} })],
    ['a result that is not an object (500)', 'bad', json({ args: {} })],
    ['no body (args default to {})', 'sums', {}],
    ['no key (401)', 'sums', { key: null, ...json({ args: {} }) }],
    ['a management key, which lacks token:use (403)', 'sums', { key: KEYS.managementKey, ...json({ args: {} }) }],
    ['malformed JSON (400)', 'sums', { body: '{"args":', headers: { 'content-type': JSON_TYPE } }],
    ['a body the schema refuses (400)', 'sums', json({ args: [], nope: 1 })],
    ['timeout_ms without callback_url (400)', 'sums', json({ args: {}, timeout_ms: 20_000 })],
    ['another Content-Type (415)', 'sums', { body: 'x', headers: { 'content-type': 'text/plain' } }],
  ] as [string, string, Sent][])('%s', async (name, reactor, sent) => {
    await compare('POST', paths(reactor), sent, stable, LEFT_TO_FASTIFY.test(name));
  });

  it.each([
    ['an unknown reactor (404)', `/reactors/${NO_REACTOR}/react`],
    ['an id that is not a UUID (400)', '/reactors/not-a-uuid/react'],
  ])('%s', async (_name, path) => {
    await compare('POST', path, json({ args: {} }));
  });
});

describe('/proxy on the lean path answers as fastify does', () => {
  let target: { url: string; close: () => Promise<void> };
  const keys = new Map<TestEmulator, Record<string, string>>();

  beforeAll(async () => {
    target = await echoDestination();
    for (const emu of [lean(), full()]) {
      const made: Record<string, string> = {};
      for (const [name, body] of Object.entries({
        open: { destination_url: `${target.url}/base` },
        closed: { destination_url: `${target.url}/base`, require_auth: true },
        gone: { destination_url: 'http://127.0.0.1:1/nowhere' },
      })) {
        const created = await emu.call('POST', '/proxies', { body: { name: `lean-${name}`, ...body } });
        expect(created.status, created.text).toBe(201);
        made[name] = created.body.key;
      }
      keys.set(emu, made);
    }
  });
  afterAll(() => target.close());

  /** The same call through each emulator's own proxy of that name. */
  const through = async (method: string, name: string, suffix: string, sent: Sent = {}) => {
    const viaLean = await send(lean(), method, `/proxy${suffix}`, {
      ...sent,
      headers: { ...sent.headers, 'svc-proxy-key': keys.get(lean())![name]! },
    });
    const viaFastify = await send(full(), method, `/proxy${suffix}`, {
      ...sent,
      headers: { ...sent.headers, 'svc-proxy-key': keys.get(full())![name]! },
    });
    expect(viaLean.lean, `${method} /proxy${suffix} was not answered by the lean path`).toBe(true);
    expect(viaFastify.lean).toBe(false);
    const comparable = ({ status, headers, text, event }: Seen) => ({
      status,
      headers,
      body: text.replace(/svc-proxy-key[^"]*/g, ''),
      event,
    });
    expect(comparable(viaLean)).toEqual(comparable(viaFastify));
    return viaLean;
  };

  it.each([
    ['a JSON body', 'POST', '', json({ amount: 1 })],
    ['a suffix and a query', 'POST', '/charges/1?expand=all', json({ amount: 2 })],
    ['GET, no body', 'GET', '/status', {}],
    ['DELETE with no body and no type', 'DELETE', '/x', {}],
    [
      'bytes of any type',
      'PUT',
      '/blob',
      { body: Buffer.from([0, 1, 2, 255]), headers: { 'content-type': 'application/octet-stream' } },
    ],
    ['a body with no Content-Type', 'PATCH', '/plain', { body: 'just text' }],
    ['an answer of 204 (no body, no type)', 'POST', '/answer/204', json({})],
    ['an answer of 304', 'GET', '/answer/304', {}],
    ['an answer with two Set-Cookie', 'GET', '/answer/cookies', {}],
    ['a text answer', 'GET', '/answer/text', {}],
    ['an answer with no Content-Type', 'GET', '/answer/untyped', {}],
    ['a large answer (streamed)', 'GET', '/answer/large', {}],
    ['an answer without a length (streamed)', 'GET', '/answer/chunked', {}],
    ['an answer that breaks off before its first byte', 'GET', '/answer/broken', {}],
    ['an empty path segment (400 proxy_error)', 'GET', '/x//evil.example/y', {}],
  ] as [string, string, string, Sent][])('%s', async (_name, method, suffix, sent) => {
    await through(method, 'open', suffix, sent);
  });

  it('a proxy that requires auth: no key (401), a key (200)', async () => {
    await through('POST', 'closed', '', { key: null, ...json({}) });
    await through('POST', 'closed', '', json({}));
  });

  it('an unreachable destination (502 proxy_error)', async () => {
    await through('GET', 'gone', '', {});
  });

  it.each([
    ['no proxy key (400 proxy_error)', {}],
    ['an unknown proxy key (404 proxy_error)', { headers: { 'svc-proxy-key': 'proxy_local_unknownunknownunknown1' } }],
    ['the hop header of a proxied call (508 proxy_error)', { headers: { 'svc-proxy-key': 'x', 'svc-proxy-hop': '1' } }],
  ] as [string, Sent][])('%s', async (_name, sent) => {
    await compare('POST', '/proxy', { key: null, ...sent });
  });
});

describe('while the emulator starts, the lean routes answer 503 as fastify does', () => {
  it.each([
    ['GET', '/health', {}],
    ['GET', '/tokens/some-token', {}],
    ['POST', '/tokens', json({ type: 'token', data: 'v' })],
    ['POST', `/reactors/${NO_REACTOR}/react`, json({ args: {} })],
    [
      'POST',
      '/proxy',
      { body: '{}', headers: { 'content-type': JSON_TYPE, 'svc-proxy-key': 'proxy_local_unknownunknownunknown1' } },
    ],
  ] as [string, string, Sent][])('%s %s', async (method, target, sent) => {
    const answers: { status: number; headers: Record<string, unknown>; text: string }[] = [];
    for (const leanRoutes of [true, false]) {
      // The store's writes wait until released: the bootstrap's write holds the start half-way.
      let release = () => {};
      const released = new Promise<void>((resolve) => (release = resolve));
      const fileSystem = {
        ...nodeFileSystem,
        writeNew: async (file: string, text: string) => {
          await released;
          await nodeFileSystem.writeNew(file, text);
        },
      };
      const emulator = createEmulator({
        port: 0,
        data: path.join(await tempDir(), '.svc', 'data.json'),
        fileSystem,
        leanRoutes,
      });
      try {
        const url = await eventually(() => {
          expect(emulator.url).toBeDefined();
          return emulator.url!;
        });
        const response = await request(url + target, {
          method: method as never,
          headers: { 'svc-trace-id': TRACE, ...sent.headers },
          body: sent.body,
        });
        const { date: _date, ...headers } = response.headers;
        answers.push({ status: response.statusCode, headers, text: await response.body.text() });
      } finally {
        release();
        await emulator.dispose();
      }
    }
    expect(answers[0]!.status).toBe(503);
    expect(answers[0]).toEqual(answers[1]);
  });
});

describe('GET /health on the lean path answers as fastify does', () => {
  it('200 {"status":"ok","version":…}', async () => {
    const seen = await compare('GET', '/health', { key: null });
    expect(JSON.parse(seen.text)).toEqual({ status: 'ok', version: packageVersion() });
  });
});

/**
 * A destination that echoes what it was sent, and answers the paths `/base/answer/<kind>` in the
 * shapes a proxy must pass through (no body, cookies, text, large, without a length, broken).
 */
async function echoDestination(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const kind = /\/answer\/(\w+)/.exec(req.url ?? '')?.[1];
      const fixed = { date: 'Tue, 24 Nov 2026 12:00:00 GMT' };
      if (kind === '204') return res.writeHead(204, { ...fixed, 'content-type': JSON_TYPE }).end();
      if (kind === '304') return res.writeHead(304, { ...fixed, etag: '"v1"' }).end();
      if (kind === 'cookies')
        return res
          .writeHead(200, { ...fixed, 'set-cookie': ['a=1; Path=/', 'b=2; HttpOnly'], 'content-type': JSON_TYPE })
          .end('{"cookies":2}');
      if (kind === 'untyped') return res.writeHead(200, { ...fixed, 'content-length': '5' }).end('bytes');
      if (kind === 'text') return res.writeHead(200, { ...fixed, 'content-type': 'text/plain' }).end('plain words');
      if (kind === 'large')
        return res
          .writeHead(200, { ...fixed, 'content-type': 'text/plain', 'content-length': String(100_000) })
          .end('y'.repeat(100_000));
      if (kind === 'chunked') {
        res.writeHead(200, { ...fixed, 'content-type': 'text/event-stream' });
        res.write('data: 1\n\n');
        setTimeout(() => res.end('data: 2\n\n'), 5);
        return;
      }
      if (kind === 'broken') {
        res.writeHead(200, { ...fixed, 'content-type': JSON_TYPE, 'content-length': '100000' });
        res.flushHeaders();
        setTimeout(() => res.destroy(), 5);
        return;
      }
      const body = Buffer.concat(chunks);
      const seen = {
        method: req.method,
        url: req.url,
        type: req.headers['content-type'] ?? null,
        length: body.length,
        body: body.toString('base64'),
      };
      res.writeHead(200, { ...fixed, 'content-type': JSON_TYPE, 'x-echo': 'yes' }).end(JSON.stringify(seen));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
