/**
 * The HTTP boundary around the sandbox (issue 11, part 6): what user code (a reactor, a proxy
 * transform) and proxy destinations send back, what a caller can put in a proxy path, and who may
 * reach the admin route. Each test makes the attack against a real emulator and real loopback
 * servers, and asserts that it is contained.
 */
import { readdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { request as undiciRequest } from 'undici';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Proxy, Reactor } from '../../../src/api/types.js';
import {
  sharedEmulator,
  startEmulator,
  unique,
  type CallOptions,
  type HttpResult,
  type TestEmulator,
} from '../../helpers/emulator.js';
import { FaultyFileSystem } from '../../helpers/faults.js';

/** User code source, one line per argument. */
const source = (...lines: string[]) => `${lines.join('\n')}\n`;

// ---------------------------------------------------------------------------------------------
// Helpers

interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}

/** A real loopback server recording what reaches it; `handle` answers (default: 200 `{"ok":true}`). */
async function destination(handle?: (request: IncomingMessage, response: ServerResponse) => void) {
  const requests: Recorded[] = [];
  const server = createServer((request, response) => {
    requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers });
    request.resume();
    request.on('end', () => {
      if (handle) handle(request, response);
      else response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await listen(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, server };
}

/** A raw TCP server: `onConnection` writes whatever bytes the test needs (malformed HTTP included). */
async function rawDestination(onConnection: (socket: net.Socket, request: string) => void) {
  const requests: string[] = [];
  const server = net.createServer((socket) => {
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      if (text.includes('\r\n\r\n') && !requests.includes(text)) {
        requests.push(text);
        onConnection(socket, text);
      }
    });
    socket.on('error', () => {});
  });
  await listen(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

async function listen(server: net.Server): Promise<void> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(async () => {
    if ('closeAllConnections' in server) (server as ReturnType<typeof createServer>).closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
}

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One request written on a socket as is (paths and headers clients would refuse or rewrite). */
async function raw(base: string, requestLine: string, headerLines: string[], body = ''): Promise<RawAnswer> {
  const { hostname, port, host } = new URL(base);
  const socket = net.connect(Number(port), hostname);
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (text += chunk));
  const hasHost = headerLines.some((line) => /^host:/i.test(line));
  const lines = [requestLine, ...(hasHost ? [] : [`Host: ${host}`]), ...headerLines, 'Connection: close'];
  if (body) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`);
  await new Promise((resolve) => socket.on('close', resolve));
  const at = text.indexOf('\r\n\r\n');
  const [statusLine = '', ...fields] = text.slice(0, at).split('\r\n');
  const headers: Record<string, string> = {};
  for (const field of fields) {
    const colon = field.indexOf(':');
    headers[field.slice(0, colon).toLowerCase()] = field.slice(colon + 1).trim();
  }
  let rest = text.slice(at + 4);
  if (headers['transfer-encoding'] === 'chunked') {
    let decoded = '';
    for (;;) {
      const end = rest.indexOf('\r\n');
      const size = parseInt(rest.slice(0, end), 16);
      if (!size) break;
      decoded += rest.slice(end + 2, end + 2 + size);
      rest = rest.slice(end + 2 + size + 2);
    }
    rest = decoded;
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest };
}

async function createReactor(
  emu: TestEmulator,
  code: string,
  configuration: Record<string, string> = {},
): Promise<Reactor> {
  const created = await emu.call<Reactor>('POST', '/reactors', {
    body: { name: unique('reactor'), code, configuration },
  });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

function react(
  emu: TestEmulator,
  reactor: Reactor,
  args: unknown = {},
  options: CallOptions = {},
): Promise<HttpResult> {
  return emu.call('POST', `/reactors/${reactor.id}/react`, { key: emu.privateKey, body: { args }, ...options });
}

async function createProxy(emu: TestEmulator, body: Record<string, unknown>): Promise<Proxy> {
  const created = await emu.call<Proxy>('POST', '/proxies', {
    body: { name: unique('proxy'), require_auth: false, ...body },
  });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

function invoke(
  emu: TestEmulator,
  proxy: Proxy,
  options: CallOptions & { method?: string; path?: string } = {},
): Promise<HttpResult> {
  const { method = 'POST', path: suffix = '', headers, ...rest } = options;
  return emu.call(method, `/proxy${suffix}`, {
    key: null,
    ...rest,
    headers: { 'svc-proxy-key': proxy.key, ...headers },
  });
}

function expectProblem(
  result: { status: number; headers: Record<string, unknown>; body: unknown },
  status: number,
  detail: RegExp,
): void {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = result.body as { status: number; detail: string };
  expect(problem.status).toBe(status);
  expect(problem.detail).toMatch(detail);
}

function expectProxyError(
  result: { status: number; headers: Record<string, unknown>; body: unknown },
  status: number,
  detail: RegExp,
): void {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.headers['content-type']).toMatch(/^application\/json/);
  expect(result.headers['svc-proxy-destination-status']).toBeUndefined();
  const body = result.body as { proxy_error: { status: number; detail: string } };
  expect(Object.keys(body)).toEqual(['proxy_error']);
  expect(body.proxy_error.status).toBe(status);
  expect(body.proxy_error.detail).toMatch(detail);
}

/** A transform or reactor that throws a CustomHttpResponseError with this status, headers and body. */
const throwsCustom = (status: number, headers: Record<string, string> = {}, body: unknown = { custom: true }) =>
  source(
    `module.exports = async () => { throw new CustomHttpResponseError({ status: ${status}, headers: ${JSON.stringify(headers)}, body: ${JSON.stringify(body)} }); };`,
  );

/** A response transform answering with these headers and body. */
const answers = (headers: Record<string, string>, body: string) =>
  source(`module.exports = async () => ({ body: ${JSON.stringify(body)}, headers: ${JSON.stringify(headers)} });`);

// ---------------------------------------------------------------------------------------------

describe('CustomHttpResponseError statuses', () => {
  const emu = sharedEmulator();

  it.each([100, 101, 103, 199])(
    'a reactor throwing status %i gets a 500 problem naming it, not a hanging caller',
    async (status) => {
      const reactor = await createReactor(emu(), throwsCustom(status));
      const result = await react(emu(), reactor);
      expectProblem(result, 500, new RegExp(`[Rr]eactor ${reactor.name}.*status ${status}.*200 to 599`));
    },
  );

  it('a proxy transform throwing status 101 gets a 500 proxy_error naming the proxy; nothing is forwarded', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), {
      destination_url: target.url,
      request_transform: { code: throwsCustom(101) },
    });
    expectProxyError(await invoke(emu(), proxy, { body: {} }), 500, new RegExp(`proxy ${proxy.name}.*status 101`));
    expect(target.requests).toHaveLength(0);
    const late = await createProxy(emu(), {
      destination_url: target.url,
      response_transform: { code: throwsCustom(102) },
    });
    expectProxyError(
      await invoke(emu(), late),
      500,
      new RegExp(`response transform of proxy ${late.name}.*status 102`),
    );
  });

  it('statuses 200 and 599 still pass through as they are', async () => {
    for (const status of [200, 599]) {
      const reactor = await createReactor(emu(), throwsCustom(status, { 'X-Mine': 'yes' }, { status }));
      const result = await react(emu(), reactor);
      expect(result.status).toBe(status);
      expect(result.headers['x-mine']).toBe('yes');
      expect(result.body).toEqual({ status });
    }
  });
});

describe('headers set by user code', () => {
  const emu = sharedEmulator();
  const BAD: [string, Record<string, string>, RegExp][] = [
    ['a name with a space', { 'X Bad': '1' }, /header name "X Bad"/],
    ['a name with a colon', { 'X-Bad:': '1' }, /header name "X-Bad:"/],
    ['an empty name', { '': '1' }, /header name ""/],
    ['a value with CR LF', { 'X-Split': 'a\r\nSet-Cookie: stolen=1' }, /header X-Split/],
    ['a value with a bare LF', { 'X-Split': 'a\nb' }, /header X-Split/],
    ['a value with NUL', { 'X-Nul': 'a\u0000b' }, /header X-Nul/],
    ['a value outside Latin-1', { 'X-Euro': 'price 5€' }, /header X-Euro/],
  ];

  it.each(BAD)(
    'a CustomHttpResponseError from a reactor with %s is a 500 problem naming the header',
    async (_what, headers, detail) => {
      const reactor = await createReactor(emu(), throwsCustom(418, headers));
      const result = await react(emu(), reactor);
      expectProblem(result, 500, detail);
      expect(result.body.detail).toContain(reactor.name);
      expect(result.headers['set-cookie']).toBeUndefined();
    },
  );

  it.each(BAD)(
    'a request transform returning %s is a 500 proxy_error naming the header; nothing is forwarded',
    async (_what, headers, detail) => {
      const target = await destination();
      const code = source(`module.exports = async () => ({ body: 'x', headers: ${JSON.stringify(headers)} });`);
      const proxy = await createProxy(emu(), { destination_url: target.url, request_transform: { code } });
      const result = await invoke(emu(), proxy, { body: {} });
      expectProxyError(result, 500, detail);
      expect(result.body.proxy_error.detail).toContain(`request transform of proxy ${proxy.name}`);
      expect(target.requests).toHaveLength(0);
    },
  );

  it.each(BAD)(
    'a response transform returning %s is a 500 proxy_error naming the header',
    async (_what, headers, detail) => {
      const target = await destination();
      const proxy = await createProxy(emu(), {
        destination_url: target.url,
        response_transform: { code: answers(headers, 'changed') },
      });
      const result = await invoke(emu(), proxy);
      expectProxyError(result, 500, detail);
      expect(result.body.proxy_error.detail).toContain(`response transform of proxy ${proxy.name}`);
      expect(result.headers['set-cookie']).toBeUndefined();
    },
  );

  it.each(BAD)(
    'a CustomHttpResponseError from a transform with %s is a 500 proxy_error',
    async (_what, headers, detail) => {
      const target = await destination();
      const proxy = await createProxy(emu(), {
        destination_url: target.url,
        request_transform: { code: throwsCustom(402, headers) },
      });
      expectProxyError(await invoke(emu(), proxy, { body: {} }), 500, detail);
    },
  );

  it('valid names and Latin-1 values pass, from a transform and from a custom response', async () => {
    const target = await destination();
    const headers = { "X-Token.Chars!#$%&'*+^_`|~": 'ok', 'X-Latin': 'caf\u00e9\tcr\u00e8me' };
    const proxy = await createProxy(emu(), {
      destination_url: target.url,
      response_transform: { code: answers(headers, 'changed') },
    });
    const result = await raw(emu().url, 'GET /proxy HTTP/1.1', [`SVC-PROXY-KEY: ${proxy.key}`]);
    expect(result.status, result.body).toBe(200);
    expect(result.headers["x-token.chars!#$%&'*+^_`|~"]).toBe('ok');
    expect(result.headers['x-latin']).toBe('caf\u00e9\tcr\u00e8me');
    expect(result.body).toBe('changed');
    const reactor = await createReactor(emu(), throwsCustom(402, headers, 'declined'));
    const custom = await raw(
      emu().url,
      `POST /reactors/${reactor.id}/react HTTP/1.1`,
      [`SVC-API-KEY: ${emu().privateKey}`, 'Content-Type: application/json'],
      '{"args":{}}',
    );
    expect(custom.status, custom.body).toBe(402);
    expect(custom.headers['x-latin']).toBe('caf\u00e9\tcr\u00e8me');
    expect(custom.body).toBe('declined');
  });
});

describe('headers the emulator owns on an answer', () => {
  const emu = sharedEmulator();
  const FORGED = {
    'SVC-TRACE-ID': 'forged',
    'Content-Length': '1',
    'Transfer-Encoding': 'chunked',
    Connection: 'close',
    'Keep-Alive': 'timeout=1',
    Upgrade: 'h2c',
  };

  /** The answer as the socket carried it, with the caller's trace id. */
  const check = (result: RawAnswer, body: string) => {
    expect(result.headers['svc-trace-id']).toBe('caller-trace-1');
    expect(result.body).toBe(body);
    expect(result.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(result.headers['transfer-encoding']).toBeUndefined();
    expect(result.headers['keep-alive']).toBeUndefined();
    expect(result.headers.upgrade).toBeUndefined();
  };

  it('a response transform cannot replace the trace id nor the framing of the answer', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), {
      destination_url: target.url,
      response_transform: { code: answers(FORGED, 'hello world') },
    });
    check(
      await raw(emu().url, 'GET /proxy HTTP/1.1', [`SVC-PROXY-KEY: ${proxy.key}`, 'SVC-TRACE-ID: caller-trace-1']),
      'hello world',
    );
  });

  it('nor can a CustomHttpResponseError, from a reactor or a transform', async () => {
    const reactor = await createReactor(emu(), throwsCustom(418, FORGED, 'short and stout'));
    const body = JSON.stringify({ args: {} });
    const fromReactor = await raw(
      emu().url,
      `POST /reactors/${reactor.id}/react HTTP/1.1`,
      [`SVC-API-KEY: ${emu().privateKey}`, 'SVC-TRACE-ID: caller-trace-1', 'Content-Type: application/json'],
      body,
    );
    expect(fromReactor.status).toBe(418);
    check(fromReactor, 'short and stout');
    const target = await destination();
    const proxy = await createProxy(emu(), {
      destination_url: target.url,
      request_transform: { code: throwsCustom(418, FORGED, 'short and stout') },
    });
    check(
      await raw(emu().url, 'GET /proxy HTTP/1.1', [`SVC-PROXY-KEY: ${proxy.key}`, 'SVC-TRACE-ID: caller-trace-1']),
      'short and stout',
    );
  });

  it("nor can the destination replace the emulator's trace id", async () => {
    const target = await destination((_request, response) =>
      response.writeHead(200, { 'SVC-TRACE-ID': 'from-destination', 'content-type': 'text/plain' }).end('dest'),
    );
    const proxy = await createProxy(emu(), { destination_url: target.url });
    const result = await invoke(emu(), proxy, { method: 'GET', headers: { 'svc-trace-id': 'caller-trace-1' } });
    expect(result.text).toBe('dest');
    expect(result.headers['svc-trace-id']).toBe('caller-trace-1');
  });
});

describe('the proxy path cannot leave the destination', () => {
  const emu = sharedEmulator();
  const ATTACKS = [
    '/proxy/../../x',
    '/proxy/..',
    '/proxy/a/../../x',
    '/proxy/./x',
    '/proxy/%2e%2e/x',
    '/proxy/%2E%2E/x',
    '/proxy/.%2e/x',
    '/proxy/%2e/x',
    '/proxy/..%2fx',
    '/proxy/..%2Fx',
    '/proxy/a%2f..%2f..%2fx',
    '/proxy/..;/x',
    '/proxy//host',
    '/proxy//127.0.0.1:1/x',
    '/proxy/a//b',
    '/proxy/\\host',
    '/proxy/\\\\host/x',
    '/proxy/..\\x',
    '/proxy/%5chost',
    '/proxy/..%5cx',
    '/proxy/%5C..%5Cx',
    '/proxy/%252e%252e/x',
    '/proxy/%25252e%25252e/x',
    '/proxy/a%00b',
    '/proxy/a%0d%0aX-Injected:%201',
  ];

  it.each(ATTACKS)('%s is refused with a 400 proxy_error and never reaches the destination', async (attack) => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: `${target.url}/base/v1` });
    const result = await raw(emu().url, `GET ${attack} HTTP/1.1`, [`SVC-PROXY-KEY: ${proxy.key}`]);
    expect(result.status, result.body).toBe(400);
    const body = JSON.parse(result.body) as { proxy_error: { status: number; detail: string } };
    expect(body.proxy_error.status).toBe(400);
    expect(body.proxy_error.detail).toMatch(/path/);
    expect(target.requests).toEqual([]);
  });

  it.each([
    ['/proxy', '/base/v1'],
    ['/proxy/', '/base/v1/'],
    ['/proxy/a/b%20c?x=1&y=..', '/base/v1/a/b%20c?x=1&y=..'],
    ['/proxy/@host', '/base/v1/@host'],
    ['/proxy/@host:1/x', '/base/v1/@host:1/x'],
    ['/proxy/a%2fb', '/base/v1/a%2fb'],
    ['/proxy/.well-known/x', '/base/v1/.well-known/x'],
    ['/proxy/a..b/...', '/base/v1/a..b/...'],
    ['/proxy/%40scope/pkg', '/base/v1/%40scope/pkg'],
  ])('%s reaches the destination as %s, on its own host', async (suffix, expected) => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: `${target.url}/base/v1` });
    const result = await raw(emu().url, `GET ${suffix} HTTP/1.1`, [`SVC-PROXY-KEY: ${proxy.key}`]);
    expect(result.status, result.body).toBe(200);
    expect(target.requests.map((request) => request.url)).toEqual([expected]);
    expect(target.requests[0]!.headers.host).toBe(new URL(target.url).host);
  });

  it('a destination without a base path cannot be turned into another host either', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url });
    for (const attack of ['/proxy//evil.example/x', '/proxy/\\evil.example', '/proxy/%5c%5cevil.example']) {
      const result = await raw(emu().url, `GET ${attack} HTTP/1.1`, [`SVC-PROXY-KEY: ${proxy.key}`]);
      expect(result.status, attack).toBe(400);
    }
    expect(target.requests).toEqual([]);
  });
});

describe('forwarding with the Enterprise connection headers (node:http)', () => {
  const emu = sharedEmulator();

  it('refuses SVC-PROXY-CONNECTION: upgrade with a 400 proxy_error; nothing is forwarded', async () => {
    const target = await destination();
    const proxy = await createProxy(emu(), { destination_url: target.url });
    for (const connection of ['upgrade', 'keep-alive, Upgrade']) {
      const result = await invoke(emu(), proxy, { method: 'GET', headers: { 'SVC-PROXY-CONNECTION': connection } });
      expectProxyError(result, 400, /upgrade/i);
    }
    expect(target.requests).toHaveLength(0);
  });

  const SWITCHING = [
    ['a bare 101', 'HTTP/1.1 101 Switching Protocols\r\n\r\n'],
    ['a 101 with Upgrade', 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n'],
  ] as const;

  it.each(SWITCHING)(
    'a destination answering %s gets a 502 proxy_error, not a hang (both forwarding paths)',
    async (_what, answer) => {
      const target = await rawDestination((socket) => socket.write(answer));
      const proxy = await createProxy(emu(), { destination_url: target.url });
      expectProxyError(
        await invoke(emu(), proxy, { method: 'GET', headers: { 'SVC-PROXY-CONNECTION': 'keep-alive' } }),
        502,
        /101/,
      );
      expectProxyError(await invoke(emu(), proxy, { method: 'GET' }), 502, /101/);
    },
  );
});

describe('answers of destinations are read within a bound', () => {
  const emu = sharedEmulator();
  const WRAP = source('module.exports = async (req) => ({ body: { length: req.args.body.length }, headers: {} });');

  it('an endless answer to a proxy with a response transform is a 502 proxy_error; the emulator stops reading', async () => {
    let sent = 0;
    let closed!: () => void;
    const gone = new Promise<void>((resolve) => (closed = resolve));
    const target = await destination((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const pump = () => {
        while (!response.destroyed && response.write(chunk)) sent += chunk.length;
      };
      response.on('drain', pump);
      response.on('close', closed);
      pump();
    });
    const proxy = await createProxy(emu(), { destination_url: target.url, response_transform: { code: WRAP } });
    expectProxyError(await invoke(emu(), proxy, { method: 'GET' }), 502, /5 MB/);
    await gone;
    // The connection was cut once the limit was passed: a bounded read, not one that grows with the answer.
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });

  it('an answer announcing more than 5 MB is refused without waiting for it', async () => {
    const target = await destination((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(6 * 1024 * 1024) });
      response.write('only the start');
    });
    const proxy = await createProxy(emu(), { destination_url: target.url, response_transform: { code: WRAP } });
    expectProxyError(await invoke(emu(), proxy, { method: 'GET' }), 502, /5 MB/);
  });

  it('a destination breaking off an answer a response transform needs is a 502 proxy_error, not a 500', async () => {
    const target = await destination((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1000' });
      response.write('partial');
      setTimeout(() => response.socket?.destroy(), 20);
    });
    const proxy = await createProxy(emu(), { destination_url: target.url, response_transform: { code: WRAP } });
    expectProxyError(await invoke(emu(), proxy, { method: 'GET' }), 502, /broke off/);
  });

  it('an answer of exactly 5 MB still reaches the response transform', async () => {
    const five = Buffer.alloc(5 * 1024 * 1024, 'b');
    const target = await destination((_request, response) =>
      response.writeHead(200, { 'content-type': 'text/plain' }).end(five),
    );
    const proxy = await createProxy(emu(), { destination_url: target.url, response_transform: { code: WRAP } });
    const result = await invoke(emu(), proxy, { method: 'GET' });
    expect(result.status, result.text).toBe(200);
    expect(result.body).toEqual({ length: five.length });
  });
});

describe('the admin route and the Host a browser sends (DNS rebinding)', () => {
  const emu = sharedEmulator();
  const mint = (headers: string[]) =>
    raw(emu().url, 'POST /_emulator/tenants HTTP/1.1', ['Content-Type: application/json', ...headers], '{}');
  const parsed = (answer: RawAnswer) => ({ ...answer, body: JSON.parse(answer.body) as unknown });

  it.each([
    ['Host: evil.example'],
    ['Host: evil.example:8790'],
    ['Host: 127.0.0.1.evil.example'],
    ['Host: localhost.evil.example'],
    ['Host: 10.0.0.1'],
    ['Host: [::2]:80'],
    ['Origin: http://evil.example'],
    ['Origin: null'],
    ['Origin: http://localhost.evil.example'],
    ['Sec-Fetch-Site: cross-site'],
  ])('refuses %s with a 403 problem', async (header) => {
    const answer = parsed(await mint([header]));
    expectProblem(answer, 403, /Host|Origin|cross-site/);
    expect(JSON.stringify(answer.body)).not.toContain('management_key');
  });

  it.each([
    ['Host: localhost'],
    ['Host: LOCALHOST:8790'],
    ['Host: 127.0.0.1'],
    ['Host: 127.1.2.3:9'],
    ['Host: [::1]:8790'],
    ['Origin: http://localhost:3000'],
    ['Origin: http://127.0.0.1:8790'],
    ['Origin: https://[::1]'],
    ['Sec-Fetch-Site: same-origin'],
    ['Sec-Fetch-Site: none'],
  ])('accepts %s', async (header) => {
    const answer = await mint([header]);
    expect(answer.status, answer.body).toBe(201);
  });

  it('guards the webhook secret the same way', async () => {
    const key = `SVC-API-KEY: ${emu().managementKey}`;
    expectProblem(
      parsed(await raw(emu().url, 'GET /_emulator/webhook-secret HTTP/1.1', [key, 'Host: evil.example'])),
      403,
      /Host/,
    );
    expectProblem(
      parsed(await raw(emu().url, 'GET /_emulator/webhook-secret HTTP/1.1', [key, 'Origin: http://evil.example'])),
      403,
      /Origin/,
    );
    expect((await raw(emu().url, 'GET /_emulator/webhook-secret HTTP/1.1', [key])).status).toBe(200);
  });
});

describe('configuration values at rest', () => {
  const REACTOR_SECRET = 'sk_live_reactor_0123456789';
  const PROXY_SECRET = 'sk_live_proxy_9876543210';
  const ECHO = source('module.exports = async (req) => ({ raw: { configuration: req.configuration } });');
  const TRANSFORM = source(
    "module.exports = async (req) => ({ body: { key: req.configuration.api_key }, headers: { 'Content-Type': 'application/json' } });",
  );

  async function storeText(emu: TestEmulator): Promise<string> {
    const folder = path.join(emu.dir, '.svc');
    const entries = await readdir(folder, { recursive: true, withFileTypes: true });
    const files = entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
    expect(files.some((file) => file.endsWith('reactors.json'))).toBe(true);
    return (await Promise.all(files.map((file) => readFile(file, 'utf8')))).join('\n');
  }

  async function setUp(emu: TestEmulator) {
    const target = await destination((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ received: request.headers['x-received'] ?? null }));
    });
    const reactor = await createReactor(emu, ECHO, { api_key: REACTOR_SECRET });
    const proxy = await createProxy(emu, {
      destination_url: target.url,
      configuration: { api_key: PROXY_SECRET },
      request_transform: { code: TRANSFORM },
    });
    return { reactor, proxy, target };
  }

  async function expectServed(emu: TestEmulator, reactor: Reactor, proxy: Proxy): Promise<void> {
    expect((await emu.call('GET', `/reactors/${reactor.id}`)).body.configuration).toEqual({ api_key: REACTOR_SECRET });
    expect((await emu.call('GET', `/proxies/${proxy.id}`)).body.configuration).toEqual({ api_key: PROXY_SECRET });
    expect((await emu.call('GET', '/reactors')).body.data[0].configuration).toEqual({ api_key: REACTOR_SECRET });
    expect((await react(emu, reactor)).body).toEqual({ raw: { configuration: { api_key: REACTOR_SECRET } } });
    expect((await invoke(emu, proxy, { body: {} })).status).toBe(200);
  }

  it('are sealed in the store files; the API answers and the code get them as before, also after a restart', async () => {
    const emu = await startEmulator();
    const { reactor, proxy } = await setUp(emu);
    expect(reactor.configuration).toEqual({ api_key: REACTOR_SECRET });
    expect(proxy.configuration).toEqual({ api_key: PROXY_SECRET });
    await expectServed(emu, reactor, proxy);
    // Changed by PUT and PATCH: still sealed.
    const put = await emu.call('PUT', `/proxies/${proxy.id}`, {
      body: {
        name: proxy.name,
        destination_url: proxy.destination_url,
        configuration: { api_key: `${PROXY_SECRET}-put` },
        request_transform: { code: TRANSFORM },
        require_auth: false,
      },
    });
    expect(put.body.configuration).toEqual({ api_key: `${PROXY_SECRET}-put` });
    const patched = await emu.call('PATCH', `/reactors/${reactor.id}`, {
      raw: JSON.stringify({ configuration: { other: `${REACTOR_SECRET}-patch` } }),
      contentType: 'application/merge-patch+json',
    });
    expect(patched.status).toBe(204);
    expect((await emu.call('GET', `/reactors/${reactor.id}`)).body.configuration).toEqual({
      api_key: REACTOR_SECRET,
      other: `${REACTOR_SECRET}-patch`,
    });
    await emu.dispose();
    const text = await storeText(emu);
    for (const secret of [REACTOR_SECRET, PROXY_SECRET, 'sk_live_']) expect(text).not.toContain(secret);

    const again = await startEmulator({ dir: emu.dir, managementKey: emu.managementKey, privateKey: emu.privateKey });
    const reread = await again.call('GET', `/proxies/${proxy.id}`);
    expect(reread.body.configuration, reread.text).toEqual({ api_key: `${PROXY_SECRET}-put` });
    expect((await react(again, reactor)).body).toEqual({
      raw: { configuration: { api_key: REACTOR_SECRET, other: `${REACTOR_SECRET}-patch` } },
    });
  });

  it('a store written with plaintext configuration still opens, serves it, and is sealed on open', async () => {
    const emu = await startEmulator();
    const { reactor, proxy } = await setUp(emu);
    await emu.dispose();
    // Rewrite the records the way an earlier svc stored them: configuration in plaintext.
    const folder = path.join(emu.dir, '.svc', 'data');
    for (const [file, configuration] of [
      ['reactors.json', { api_key: REACTOR_SECRET }],
      ['proxies.json', { api_key: PROXY_SECRET }],
    ] as const) {
      const content = JSON.parse(await readFile(path.join(folder, file), 'utf8')) as {
        records: Record<string, unknown>[];
      };
      for (const record of content.records) {
        delete record.configuration_sealed;
        record.configuration = configuration;
      }
      await writeFile(path.join(folder, file), JSON.stringify(content));
    }
    expect(await storeText(emu)).toContain(REACTOR_SECRET);

    const again = await startEmulator({ dir: emu.dir, managementKey: emu.managementKey, privateKey: emu.privateKey });
    await expectServed(again, reactor, proxy);
    const text = await storeText(again);
    for (const secret of [REACTOR_SECRET, PROXY_SECRET]) expect(text).not.toContain(secret);
  });

  /** Rewrites the stored reactors and proxies `ids` the way an earlier svc stored them: configuration in plaintext. */
  async function unseal(emu: TestEmulator, configurations: Record<string, Record<string, string>>): Promise<void> {
    const folder = path.join(emu.dir, '.svc', 'data');
    for (const file of ['reactors.json', 'proxies.json']) {
      const content = JSON.parse(await readFile(path.join(folder, file), 'utf8')) as {
        records: Record<string, unknown>[];
      };
      for (const record of content.records) {
        const configuration = configurations[record.id as string];
        if (configuration === undefined) continue;
        delete record.configuration_sealed;
        record.configuration = configuration;
      }
      await writeFile(path.join(folder, file), JSON.stringify(content));
    }
  }

  it('a plaintext store is sealed in one write: a write the disk refuses leaves every record as it was', async () => {
    const emu = await startEmulator();
    const { reactor, proxy } = await setUp(emu);
    await emu.dispose();
    await unseal(emu, { [reactor.id]: { api_key: REACTOR_SECRET }, [proxy.id]: { api_key: PROXY_SECRET } });
    const before = await storeText(emu);

    const fs = new FaultyFileSystem();
    fs.fail((op, file) => op === 'rename' && file.includes(`${path.sep}journal${path.sep}`), 'EROFS');
    await expect(
      startEmulator({ dir: emu.dir, managementKey: emu.managementKey, privateKey: emu.privateKey, fileSystem: fs }),
    ).rejects.toThrow(/read-only/);
    // Both records are written in one journal entry, and it was refused: neither file changed.
    expect(fs.writes((file) => file.includes(`${path.sep}journal${path.sep}`))).toBe(1);
    expect(await storeText(emu)).toBe(before);

    const again = await startEmulator({ dir: emu.dir, managementKey: emu.managementKey, privateKey: emu.privateKey });
    await expectServed(again, reactor, proxy);
    await again.dispose();
    for (const secret of [REACTOR_SECRET, PROXY_SECRET]) expect(await storeText(again)).not.toContain(secret);
  });

  it('without its master key, a store with sealed configuration (and no tokens) starts with a new key: each lost configuration is emptied and named in a warning', async () => {
    const emu = await startEmulator();
    const { reactor, proxy } = await setUp(emu);
    // A configuration an earlier svc kept in plaintext still reads as it is: sealed under the new key, not lost.
    const plain = await createReactor(emu, ECHO, { api_key: 'kept-in-plaintext' });
    await emu.dispose();
    await unseal(emu, { [plain.id]: { api_key: 'kept-in-plaintext' } });
    await unlink(path.join(emu.dir, '.svc', 'master.key'));

    const again = await startEmulator({ dir: emu.dir, managementKey: emu.managementKey, privateKey: emu.privateKey });
    const warnings = again.events.flatMap((event) => (event.type === 'warning' ? [event.message] : []));
    expect(warnings).toContainEqual(
      expect.stringMatching(new RegExp(`configuration of reactors ${reactor.name} is emptied; enter it again`)),
    );
    expect(warnings).toContainEqual(
      expect.stringMatching(new RegExp(`configuration of proxies ${proxy.name} is emptied; enter it again`)),
    );
    expect(warnings.join('\n')).not.toContain(plain.name);
    expect(warnings.join('\n')).not.toContain('sk_live_');
    expect((await again.call('GET', `/reactors/${reactor.id}`)).body.configuration).toEqual({});
    expect((await react(again, reactor)).body).toEqual({ raw: { configuration: {} } });
    expect((await react(again, plain)).body).toEqual({ raw: { configuration: { api_key: 'kept-in-plaintext' } } });
    const shown = await again.call<Proxy>('GET', `/proxies/${proxy.id}`);
    expect(shown.body.configuration).toBeNull();
    expect(shown.body.key).not.toBe(proxy.key);
    // Entered again, it serves; the next start warns of nothing.
    const patched = await again.call('PATCH', `/reactors/${reactor.id}`, {
      raw: JSON.stringify({ configuration: { api_key: 'entered-again' } }),
      contentType: 'application/merge-patch+json',
    });
    expect(patched.status, patched.text).toBe(204);
    await again.dispose();

    const third = await startEmulator({ dir: emu.dir, managementKey: emu.managementKey, privateKey: emu.privateKey });
    expect(third.events.filter((event) => event.type === 'warning')).toEqual([]);
    expect((await react(third, reactor)).body).toEqual({ raw: { configuration: { api_key: 'entered-again' } } });
    expect((await third.call('GET', `/proxies/${proxy.id}`)).body.configuration).toBeNull();
    await third.dispose();
    expect(await storeText(third)).not.toContain('kept-in-plaintext');
  });
});

describe('the streaming path still works with all of this', () => {
  const emu = sharedEmulator();

  it('an event stream through a proxy arrives as it comes, with the trace id of the call', async () => {
    let finish!: () => void;
    const target = await destination((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'svc-trace-id': 'from-destination' });
      response.write('data: first\n\n');
      finish = () => response.end('data: last\n\n');
    });
    const proxy = await createProxy(emu(), { destination_url: target.url });
    const response = await undiciRequest(`${emu().url}/proxy`, {
      headers: { 'svc-proxy-key': proxy.key, 'svc-trace-id': 'stream-trace-1' },
    });
    expect(response.headers['svc-trace-id']).toBe('stream-trace-1');
    const chunks = response.body[Symbol.asyncIterator]();
    expect(Buffer.from((await chunks.next()).value as Buffer).toString()).toBe('data: first\n\n');
    finish();
    let rest = '';
    for (let next = await chunks.next(); !next.done; next = await chunks.next())
      rest += Buffer.from(next.value as Buffer).toString();
    expect(rest).toBe('data: last\n\n');
  });
});
