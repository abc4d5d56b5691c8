import { createServer, type IncomingMessage } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Proxy } from '../../../src/api/types.js';
import type { EmulatorEvent } from '../../../src/emulator/events.js';
import { createHttpServer } from '../../../src/emulator/http/front.js';
import { type TestEmulator, sharedEmulator, unique } from '../../helpers/emulator.js';
import { type RawResponse, rawConnection, rawRequest } from '../../helpers/raw-http.js';

/** What the new router was attacked with and broke on, and what its fixes must keep working. */

async function listening(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => void server.close());
  return (server.address() as AddressInfo).port;
}

async function createProxy(emu: TestEmulator, destination: string): Promise<Proxy> {
  const created = await emu.call<Proxy>('POST', '/proxies', {
    body: { name: unique('proxy'), destination_url: destination, require_auth: false },
  });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

/** One request on a connection of its own, and its answer. */
async function answerTo(url: string, requestLine: string, headers: string[] = []): Promise<RawResponse> {
  const connection = await rawConnection(url);
  connection.send(rawRequest(url, requestLine, [...headers, 'connection: close']));
  const answer = await connection.next();
  if (answer === 'closed') throw new Error(`${requestLine}: the connection closed without an answer`);
  return answer;
}

function expectProxyError(answer: RawResponse, status: number, label: string): void {
  expect(answer.status, `${label}: ${answer.body}`).toBe(status);
  expect(answer.headers['content-type'], label).toMatch(/^application\/json/);
  expect(answer.headers['svc-proxy-destination-status'], label).toBeUndefined();
  const body = JSON.parse(answer.body);
  expect(Object.keys(body), label).toEqual(['proxy_error']);
  expect(body.proxy_error.status, label).toBe(status);
}

describe('a streamed destination answer that breaks off before its first bytes', () => {
  const emu = sharedEmulator();

  it('is a 502 proxy_error, without the destination headers, and no internal error is logged', async () => {
    // Chunked or over 64 KB: these answers stream through rather than being read whole first.
    const breaks: Record<string, (socket: net.Socket) => void> = {
      'chunked, then reset': (socket) => {
        socket.write('HTTP/1.1 200 OK\r\nx-dest: yes\r\nset-cookie: s=1\r\ntransfer-encoding: chunked\r\n\r\n');
        setTimeout(() => socket.destroy(), 20);
      },
      'chunked, then a chunk size that is not hex': (socket) => {
        socket.write('HTTP/1.1 200 OK\r\nx-dest: yes\r\nset-cookie: s=1\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n');
        setTimeout(() => socket.destroy(), 20);
      },
      '100 KB announced, then closed': (socket) => {
        socket.end('HTTP/1.1 200 OK\r\nx-dest: yes\r\nset-cookie: s=1\r\ncontent-length: 100000\r\n\r\n');
      },
    };
    for (const [label, answer] of Object.entries(breaks)) {
      const destination = net.createServer((socket) => {
        socket.on('error', () => {});
        socket.once('data', () => answer(socket));
      });
      const port = await listening(destination);
      const proxy = await createProxy(emu(), `http://127.0.0.1:${port}`);
      const before = emu().events.length;
      const result = await answerTo(emu().url, 'GET /proxy/x HTTP/1.1', [`svc-proxy-key: ${proxy.key}`]);
      expectProxyError(result, 502, label);
      expect(JSON.parse(result.body).proxy_error.type, label).toBe('urn:svc:problem:bad-gateway');
      expect(result.headers['x-dest'], label).toBeUndefined();
      expect(result.headers['set-cookie'], label).toBeUndefined();
      const errors = emu()
        .events.slice(before)
        .filter((event: EmulatorEvent) => event.type === 'error');
      expect(errors, label).toEqual([]);
    }
  });

  it('still streams an answer whose first bytes are late, and one that is empty', async () => {
    const destination = createServer((req, res) => {
      if (req.url === '/empty') return res.writeHead(200, { 'x-dest': 'yes' }).end();
      res.writeHead(200, { 'x-dest': 'yes', 'content-type': 'text/event-stream' });
      setTimeout(() => res.write('data: 1\n\n'), 100);
      setTimeout(() => res.end('data: 2\n\n'), 200);
    });
    const port = await listening(destination);
    const proxy = await createProxy(emu(), `http://127.0.0.1:${port}`);
    const late = await answerTo(emu().url, 'GET /proxy/late HTTP/1.1', [`svc-proxy-key: ${proxy.key}`]);
    expect(late.status).toBe(200);
    expect(late.headers['x-dest']).toBe('yes');
    expect(late.headers['content-type']).toBe('text/event-stream');
    expect(late.body).toBe('data: 1\n\ndata: 2\n\n');
    const empty = await answerTo(emu().url, 'GET /proxy/empty HTTP/1.1', [`svc-proxy-key: ${proxy.key}`]);
    expect(empty.status, empty.body).toBe(200);
    expect(empty.headers['x-dest']).toBe('yes');
    expect(empty.body).toBe('');
  });

  it('is let go when the caller leaves while the destination has sent only its headers', async () => {
    let destinationClosed!: () => void;
    const closed = new Promise<void>((resolve) => (destinationClosed = resolve));
    const destination = net.createServer((socket) => {
      socket.on('error', () => {});
      socket.once('close', destinationClosed);
      socket.once('data', () => socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n'));
    });
    const port = await listening(destination);
    const proxy = await createProxy(emu(), `http://127.0.0.1:${port}`);
    const connection = await rawConnection(emu().url);
    connection.send(rawRequest(emu().url, 'GET /proxy/quiet HTTP/1.1', [`svc-proxy-key: ${proxy.key}`]));
    // The emulator has the destination's headers once the request event says nothing yet; leave then.
    await new Promise((resolve) => setTimeout(resolve, 200));
    connection.destroy();
    await closed;
  });
});

describe('an absolute-form target on /proxy', () => {
  const emu = sharedEmulator();

  it('is forwarded by its path and query: no authority or userinfo reaches the destination path', async () => {
    const seen: string[] = [];
    const destination = createServer((req: IncomingMessage, res) => {
      seen.push(req.url ?? '');
      res.end('ok');
    });
    const port = await listening(destination);
    const proxy = await createProxy(emu(), `http://127.0.0.1:${port}/base`);
    const { url } = emu();
    const host = new URL(url).host;
    const cases: [string, string][] = [
      [`http://${host}/proxy/x?a=1`, '/base/x?a=1'],
      [`http://user:secret@${host}/proxy/x`, '/base/x'],
      [`HTTP://${host}/proxy`, '/base'],
      [`http://${host}/proxy?a=1`, '/base?a=1'],
      ['/proxy/x#fragment', '/base/x'],
      ['/proxy/x?a=1#fragment', '/base/x?a=1'],
    ];
    for (const [target, expected] of cases) {
      seen.length = 0;
      const answer = await answerTo(url, `GET ${target} HTTP/1.1`, [`svc-proxy-key: ${proxy.key}`]);
      expect(answer.status, `${target}: ${answer.body}`).toBe(200);
      expect(seen, target).toEqual([expected]);
    }
  });
});

describe('an absolute-form target', () => {
  const emu = sharedEmulator();

  it('on /proxy is answered as /proxy is: its errors are proxy_errors', async () => {
    const { url } = emu();
    const host = new URL(url).host;
    const cases: [string, number][] = [
      [`OPTIONS http://${host}/proxy HTTP/1.1`, 404],
      [`GET http://${host}/proxy/%zz HTTP/1.1`, 400],
      [`GET http://${host}/proxy/x#fragment HTTP/1.1`, 400],
    ];
    for (const [line, status] of cases) expectProxyError(await answerTo(url, line), status, line);
  });

  it('is logged by its path: no authority or userinfo in the request event', async () => {
    const { url, events } = emu();
    const host = new URL(url).host;
    const before = events.length;
    await answerTo(url, `GET http://user:secret@${host}/proxy/x?svc-proxy-key=nope HTTP/1.1`);
    await answerTo(url, `GET http://user:secret@${host}/health#fragment HTTP/1.1`);
    const logged = events.slice(before).filter((event: EmulatorEvent) => event.type === 'request');
    expect(logged.map((event) => (event as { path: string }).path)).toEqual(['/proxy/x', '/health']);
    expect(JSON.stringify(logged)).not.toContain('secret');
  });
});

describe('the one error answer', () => {
  it('never takes the server down: an error whose code names an Object property, a header Node refuses', async () => {
    const events: EmulatorEvent[] = [];
    const failing = Object.assign(new Error('a failure of the store check'), { code: 'constructor' });
    const services = {
      storeProblem: () => {
        throw failing;
      },
    };
    // A proxy answer with a header value Node refuses to write.
    const pipeline = { invoke: async () => ({ status: 200, headers: { 'x-bad': 'a\r\nb' }, body: 'x' }) };
    const http = createHttpServer({
      services: services as never,
      pipeline: pipeline as never,
      emit: (event) => events.push(event as EmulatorEvent),
      eventLog: {} as never,
    });
    await http.listen(0, '127.0.0.1');
    onTestFinished(() => http.close());
    const url = `http://127.0.0.1:${(http.server.address() as AddressInfo).port}`;

    const health = await answerTo(url, 'GET /health HTTP/1.1');
    expect(health.status, health.body).toBe(500);
    expect(health.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(health.body).not.toMatch(/\n\s+at /);

    const proxied = await answerTo(url, 'GET /proxy/x HTTP/1.1');
    expectProxyError(proxied, 500, 'a refused header');
    expect(proxied.headers['x-bad']).toBeUndefined();

    // Still serving.
    const again = await answerTo(url, 'GET /proxy/x HTTP/1.1');
    expect(again.status).toBe(500);
  });
});
