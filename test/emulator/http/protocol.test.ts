import net from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PROBLEM_TYPES } from '../../../src/api/problem.js';
import { sharedEmulator } from '../../helpers/emulator.js';
import { rawConnection, rawRequest, type RawResponse } from '../../helpers/raw-http.js';

/** Everything the server writes on one connection until it closes it (or `settleMs` of quiet). */
async function exchange(url: string, bytes: string, settleMs = 3000): Promise<string> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  onTestFinished(() => void socket.destroy());
  let received = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(bytes);
  await new Promise<void>((resolve) => {
    const quiet = setTimeout(resolve, settleMs);
    socket.once('close', () => {
      clearTimeout(quiet);
      resolve();
    });
  });
  return received;
}

/** The status, headers and body of one answer as raw text. */
function parse(text: string): { status: number; headers: Record<string, string>; body: string } {
  const end = text.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = text.slice(0, end < 0 ? text.length : end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const at = line.indexOf(':');
    headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: end < 0 ? '' : text.slice(end + 4) };
}

function expectProblem(answer: RawResponse | 'closed', status: number, label: string) {
  expect(answer, label).not.toBe('closed');
  const response = answer as RawResponse;
  expect(response.status, `${label}: ${response.body}`).toBe(status);
  expect(response.headers['content-type'], label).toMatch(/^application\/problem\+json/);
  const problem = JSON.parse(response.body);
  expect(problem, label).toMatchObject({ status, type: expect.stringMatching(/^urn:svc:problem:/) });
  return problem as { status: number; type: string; title: string; detail: string };
}

function expectProxyError(answer: { status: number; headers: Record<string, string>; body: string }, status: number) {
  expect(answer.status, answer.body).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(answer.body) as { proxy_error: { status: number; type: string; detail: string } };
  expect(Object.keys(body)).toEqual(['proxy_error']);
  expect(body.proxy_error).toMatchObject({ status, type: expect.stringMatching(/^urn:svc:problem:/) });
  expect(answer.headers['svc-proxy-destination-status']).toBeUndefined();
  return body.proxy_error;
}

describe('requests that are not plain HTTP requests', () => {
  const emu = sharedEmulator();

  it('refuses two Host headers anywhere, the admin route first: 400, and no tenant is made', async () => {
    const { url } = emu();
    const before = emu().events.length;
    const cases: [string, string, string[]][] = [
      ['admin, loopback Host first', 'POST /_emulator/tenants HTTP/1.1', ['Host: evil.example']],
      ['admin, as HOST', 'POST /_emulator/tenants HTTP/1.1', ['HOST: 127.0.0.1']],
      ['a lean route', 'GET /health HTTP/1.1', ['host: localhost']],
      ['a route', 'GET /applications HTTP/1.1', ['Host: localhost']],
    ];
    for (const [label, line, extra] of cases) {
      const connection = await rawConnection(url);
      connection.send(rawRequest(url, line, [...extra, 'Content-Length: 0']));
      const problem = expectProblem(await connection.next(), 400, label);
      expect(problem.detail, label).toMatch(/Host/);
    }
    const created = emu()
      .events.slice(before)
      .filter((event) => event.type === 'request' && event.path === '/_emulator/tenants' && event.status === 201);
    expect(created).toEqual([]);
  });

  it('answers an Expect it cannot meet with a 417 problem; 100-continue still works', async () => {
    const { url, privateKey } = emu();
    const connection = await rawConnection(url);
    connection.send(rawRequest(url, 'GET /health HTTP/1.1', ['Expect: bogus-thing']));
    const problem = expectProblem(await connection.next(), 417, 'Expect: bogus-thing');
    expect(problem.detail).toMatch(/Expect/);
    expect(problem.detail).toMatch(/100-continue/);
    expect(problem.type).toBe(PROBLEM_TYPES.expectationFailed);

    const body = JSON.stringify({ data: { n: 1 } });
    const continued = await exchange(
      url,
      rawRequest(
        url,
        'POST /tokens HTTP/1.1',
        [
          'Expect: 100-continue',
          `svc-api-key: ${privateKey}`,
          'content-type: application/json',
          `content-length: ${body.length}`,
          'connection: close',
        ],
        body,
      ),
    );
    // The body was asked for, read and checked (a field it lacks is named).
    expect(continued.slice(0, 40), continued).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 400 /);
    expect(continued).toContain('type is required');
  });

  it('answers CONNECT with a 405 problem and closes the connection; the server serves on', async () => {
    const { url } = emu();
    const text = await exchange(url, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    const answer = parse(text);
    expect(answer.status, text).toBe(405);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(answer.headers.connection).toBe('close');
    expect(JSON.parse(answer.body)).toMatchObject({ status: 405, detail: expect.stringMatching(/CONNECT/) });
    const connection = await rawConnection(url);
    connection.send(rawRequest(url, 'GET /health HTTP/1.1'));
    expect(await connection.next()).toMatchObject({ status: 200 });
  });

  it.each([
    ['a header that is not HTTP', ['Bad Header: x'], 400],
    ['headers over the limit', [`x-big: ${'a'.repeat(20_000)}`], 431],
    ['a Content-Length that is not a number', ['Content-Length: abc'], 400],
    ['an Expect it cannot meet', ['Expect: bogus'], 417],
    ['two Host headers', ['Host: localhost'], 400],
  ])('answers HEAD with %s with headers only, never a body', async (_label, extra, status) => {
    const { url } = emu();
    const text = await exchange(url, rawRequest(url, 'HEAD /health HTTP/1.1', [...extra, 'Connection: close']));
    const answer = parse(text);
    expect(answer.status, text).toBe(status);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(answer.body, text).toBe('');
  });
});

describe('errors on /proxy are proxy_error, however early they are met', () => {
  const emu = sharedEmulator();

  it.each([
    ['a path that is not valid percent-encoding', 'GET /proxy/%ff HTTP/1.1', [], 400, /percent-encoding/],
    ['a method the proxy does not take', 'OPTIONS /proxy HTTP/1.1', [], 404, /No route OPTIONS/],
    ['a header that is not HTTP', 'POST /proxy/x?a=1 HTTP/1.1', ['Bad Header: x'], 400, /not valid HTTP/],
    ['a Content-Length that is not a number', 'POST /proxy HTTP/1.1', ['Content-Length: 1x'], 400, /Content-Length/],
    ['two Host headers', 'GET /proxy HTTP/1.1', ['Host: localhost'], 400, /Host/],
    ['an Expect it cannot meet', 'POST /proxy HTTP/1.1', ['Expect: bogus', 'Content-Length: 0'], 417, /Expect/],
  ])('%s', async (_label, line, extra, status, detail) => {
    const { url } = emu();
    const text = await exchange(url, rawRequest(url, line, [...extra, 'Connection: close']));
    expect(expectProxyError(parse(text), status).detail).toMatch(detail);
  });

  it('other paths keep plain problems', async () => {
    const { url } = emu();
    const text = await exchange(url, rawRequest(url, 'GET /proxyish/%ff HTTP/1.1', ['Connection: close']));
    const answer = parse(text);
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});
