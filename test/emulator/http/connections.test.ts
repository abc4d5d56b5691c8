import { packageVersion } from '../../../src/lib/package-version.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { sharedEmulator, startEmulator, unique } from '../../helpers/emulator.js';
import { rawConnection, rawRequest, type RawResponse } from '../../helpers/raw-http.js';

function expectProblem(answer: RawResponse | 'closed', status: number, label: string): void {
  expect(answer, label).not.toBe('closed');
  const response = answer as RawResponse;
  expect(response.status, `${label}: ${response.body}`).toBe(status);
  expect(response.headers['content-type'], label).toMatch(/^application\/problem\+json/);
  const problem = JSON.parse(response.body);
  expect(problem, label).toMatchObject({
    status,
    type: expect.stringMatching(/^urn:svc:problem:/),
    title: expect.any(String),
    detail: expect.any(String),
    trace_id: expect.any(String),
  });
}

const repeated = (name: string, count: number, value = (i: number) => String(i)) =>
  Array.from({ length: count }, (_, i) => `${name}=${value(i)}`).join('&');

describe('errors the router and node:http meet', () => {
  const emu = sharedEmulator();

  it('router refusals are problems, and the keep-alive connection serves the next request', async () => {
    const { url, privateKey, managementKey } = emu();
    const connection = await rawConnection(url);
    const cases: [string, string, number][] = [
      ['a path with %ff', `GET /tokens/%ff HTTP/1.1`, 400],
      ['%ff outside any route', `GET /%ff/x HTTP/1.1`, 400],
      ['a parameter far too long', `GET /tokens/${'x'.repeat(5000)} HTTP/1.1`, 414],
      ['300 page parameters', `GET /tokens?${repeated('page', 300)} HTTP/1.1`, 400],
      ['300 id parameters', `GET /tokens?${repeated('id', 300, (i) => `t${i}`)} HTTP/1.1`, 400],
      ['300 name parameters', `GET /applications?${repeated('name', 300)} HTTP/1.1`, 400],
      ['an invalid uuid', `GET /applications/not-a-uuid HTTP/1.1`, 400],
    ];
    for (const [label, line, status] of cases) {
      const key = line.includes('/applications') ? managementKey : privateKey;
      connection.send(rawRequest(url, line, [`svc-api-key: ${key}`]));
      const answer = await connection.next();
      expectProblem(answer, status, label);
      expect((answer as RawResponse).headers.connection, label).not.toBe('close');
    }
    connection.send(rawRequest(url, 'GET /health HTTP/1.1'));
    expect(await connection.next()).toMatchObject({
      status: 200,
      body: JSON.stringify({ status: 'ok', version: packageVersion() }),
    });
    expect(connection.reset).toBe(false);
  });

  it('bytes that are not HTTP are answered with a problem, then the connection is closed cleanly', async () => {
    const { url, privateKey } = emu();
    const post = (headers: string[], body: string) =>
      rawRequest(
        url,
        'POST /tokens HTTP/1.1',
        [`svc-api-key: ${privateKey}`, 'content-type: application/json', ...headers],
        body,
      );
    const token = '{"type":"token","data":"x"}';
    const cases: [string, string, number][] = [
      ['a request line that is not HTTP', 'GARBAGE\r\n\r\n', 400],
      ['a Content-Length that is not a number', post(['content-length: abc'], token), 400],
      ['two Content-Lengths that differ', post(['content-length: 27', 'content-length: 5'], token), 400],
      [
        'Content-Length with Transfer-Encoding',
        post([`content-length: ${token.length}`, 'transfer-encoding: chunked'], `1b\r\n${token}\r\n0\r\n\r\n`),
        400,
      ],
      ['a header name with a space', rawRequest(url, 'GET /health HTTP/1.1', ['bad name: x']), 400],
      ['headers over 16 KB', rawRequest(url, 'GET /health HTTP/1.1', [`x-big: ${'a'.repeat(20_000)}`]), 431],
      [
        'a URL over 16 KB',
        rawRequest(url, `GET /tokens?${repeated('id', 2000, (i) => `token-${i}`)} HTTP/1.1`, [
          `svc-api-key: ${privateKey}`,
        ]),
        431,
      ],
      [
        'a body shorter than its Content-Length, then more bytes',
        post(['content-length: 2'], `${token}GET /health HTTP/1.1\r\n\r\n`),
        400,
      ],
      ['a chunk size that is not hex', post(['transfer-encoding: chunked'], 'zz\r\n{}\r\n0\r\n\r\n'), 400],
      ['an HTTP/1.1 request without Host', 'GET /health HTTP/1.1\r\nconnection: close\r\n\r\n', 400],
      [
        'a Transfer-Encoding svc does not read',
        rawRequest(url, 'GET /health HTTP/1.1', ['transfer-encoding: xchunked']),
        400,
      ],
      ['chunked, then another coding', post(['transfer-encoding: chunked, gzip'], '2\r\n{}\r\n0\r\n\r\n'), 400],
    ];
    for (const [label, bytes, status] of cases) {
      const connection = await rawConnection(url);
      connection.send(bytes);
      expectProblem(await connection.next(), status, label);
      expect(await connection.next(), label).toBe('closed');
      expect(connection.reset, label).toBe(false);
    }
    expect(emu().events.filter((event) => event.type === 'error')).toEqual([]);
  });

  it('an answer under way when bad bytes follow on its connection is finished first', async () => {
    const { url, privateKey } = emu();
    const connection = await rawConnection(url);
    connection.send(
      `${rawRequest(url, 'GET /tokens?size=1 HTTP/1.1', [`svc-api-key: ${privateKey}`])}NOT HTTP AT ALL\r\n\r\n`,
    );
    const first = await connection.next();
    expect(first).toMatchObject({ status: 200 });
    expect(JSON.parse((first as RawResponse).body)).toHaveProperty('pagination');
    expectProblem(await connection.next(), 400, 'the bad bytes');
    expect(await connection.next()).toBe('closed');
    expect(connection.reset).toBe(false);
  });

  it('after a body the parser refuses, the connection serves the next request or is closed cleanly', async () => {
    const { url, privateKey } = emu();
    const bodies: [string, Buffer, string, number][] = [
      ['malformed JSON', Buffer.from('{"type":'), 'application/json', 400],
      ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]), 'application/json', 400],
      ['a latin1 charset', Buffer.from('{}'), 'application/json; charset=latin1', 415],
      ['nesting past the limit', Buffer.from('['.repeat(1000) + ']'.repeat(1000)), 'application/json', 400],
      ['a form', Buffer.from('a=b'), 'application/x-www-form-urlencoded', 415],
    ];
    for (const [label, body, type, status] of bodies) {
      const connection = await rawConnection(url);
      const head = rawRequest(url, 'POST /tokens HTTP/1.1', [
        `svc-api-key: ${privateKey}`,
        `content-type: ${type}`,
        `content-length: ${body.length}`,
      ]);
      connection.send(Buffer.concat([Buffer.from(head), body, Buffer.from(rawRequest(url, 'GET /health HTTP/1.1'))]));
      expectProblem(await connection.next(), status, label);
      const next = await connection.next();
      if (next !== 'closed')
        expect(next, label).toMatchObject({
          status: 200,
          body: JSON.stringify({ status: 'ok', version: packageVersion() }),
        });
      expect(connection.reset, label).toBe(false);
    }
  });
});

describe('slow clients', () => {
  it('a body that stalls is answered 408 and its connection closed, within the configured bound', async () => {
    const emu = await startEmulator({ inMemory: true, requestTimeoutMs: 600, headersTimeoutMs: 300 });
    const connection = await rawConnection(emu.url);
    connection.send(
      rawRequest(
        emu.url,
        'POST /tokens HTTP/1.1',
        [`svc-api-key: ${emu.privateKey}`, 'content-type: application/json', 'content-length: 100'],
        '{"type":',
      ),
    );
    expectProblem(await connection.next(), 408, 'stalled body');
    expect(await connection.next()).toBe('closed');
    expect(emu.events.filter((event) => event.type === 'error')).toEqual([]);
  });

  it('headers that stall are answered 408 and the connection closed', async () => {
    const emu = await startEmulator({ inMemory: true, requestTimeoutMs: 600, headersTimeoutMs: 300 });
    const connection = await rawConnection(emu.url);
    connection.send(`GET /health HTTP/1.1\r\nHost: ${new URL(emu.url).host}\r\nx-slow: `);
    expectProblem(await connection.next(), 408, 'stalled headers');
    expect(await connection.next()).toBe('closed');
    // the server itself is fine
    const fresh = await rawConnection(emu.url);
    fresh.send(rawRequest(emu.url, 'GET /health HTTP/1.1'));
    expect(await fresh.next()).toMatchObject({ status: 200 });
  });

  it('refuses timeouts that are not whole milliseconds', async () => {
    await expect(startEmulator({ inMemory: true, requestTimeoutMs: 0 })).rejects.toThrow(
      /requestTimeoutMs must be a whole number/,
    );
  });
});

describe('stopping', () => {
  it('closes idle keep-alive connections at once and lets an answer in flight finish, marked Connection: close', async () => {
    const emu = await startEmulator({ inMemory: true, shutdownGraceMs: 60_000 });
    const code =
      "module.exports = async () => { console.log('running'); await new Promise((resolve) => setTimeout(resolve, 500)); return { raw: 'done' }; };";
    const reactor = await emu.call('POST', '/reactors', { body: { name: unique('slow'), code, configuration: {} } });
    expect(reactor.status, reactor.text).toBe(201);
    const idle = await rawConnection(emu.url);
    idle.send(rawRequest(emu.url, 'GET /health HTTP/1.1'));
    expect(await idle.next()).toMatchObject({ status: 200 });
    const busy = await rawConnection(emu.url);
    const body = '{}';
    busy.send(
      rawRequest(
        emu.url,
        `POST /reactors/${reactor.body.id}/react HTTP/1.1`,
        [`svc-api-key: ${emu.privateKey}`, 'content-type: application/json', `content-length: ${body.length}`],
        body,
      ),
    );
    for (let i = 0; i < 500 && !emu.events.some((event) => event.type === 'console'); i++)
      await new Promise((resolve) => setTimeout(resolve, 10));

    // a grace of a minute, inside a test of 20 s: idle connections must not wait for it
    const disposed = emu.dispose();
    expect(await idle.next()).toBe('closed');
    expect(idle.reset).toBe(false);
    const answer = await busy.next();
    expect(answer).toMatchObject({ status: 200, body: '{"raw":"done"}', headers: { connection: 'close' } });
    expect(await busy.next()).toBe('closed');
    await disposed;
  });

  it('cuts what is still running once the grace is over', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => {
      silent.closeAllConnections();
      return new Promise<void>((resolve) => silent.close(() => resolve()));
    });
    const emu = await startEmulator({ inMemory: true, shutdownGraceMs: 300 });
    const proxy = await emu.call('POST', '/proxies', {
      body: {
        name: unique('silent'),
        destination_url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
        require_auth: false,
      },
    });
    expect(proxy.status, proxy.text).toBe(201);
    const waiting = await rawConnection(emu.url);
    waiting.send(rawRequest(emu.url, 'GET /proxy HTTP/1.1', [`svc-proxy-key: ${proxy.body.key}`]));
    await new Promise<void>((resolve) => silent.once('request', () => resolve()));
    await emu.dispose();
    expect(await waiting.next()).toBe('closed');
  });
});
