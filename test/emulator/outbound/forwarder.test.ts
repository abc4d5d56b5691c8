import { getEventListeners } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { HttpError } from '../../../src/emulator/errors.js';
import { BODY_TIMEOUT_MS, Forwarder, HEADERS_TIMEOUT_MS } from '../../../src/emulator/outbound/forwarder.js';
import type { OutboundRequest } from '../../../src/emulator/outbound/index.js';

/** A raw TCP destination: `onRequest` decides what bytes (if any) go back, and when. */
async function destination(onRequest: (socket: net.Socket) => void): Promise<{ url: URL; closed: Promise<void> }> {
  let closed!: () => void;
  const gone = new Promise<void>((resolve) => (closed = resolve));
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', closed);
    socket.once('data', () => onRequest(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`), closed: gone };
}

/** Short bounds, so that a test sees them pass; the real ones are undici's. */
function forwarder(): Forwarder {
  const instance = new Forwarder({ headersTimeoutMs: 300, bodyTimeoutMs: 300 });
  onTestFinished(() => instance.close());
  return instance;
}

const PATHS: [string, Partial<OutboundRequest>][] = [
  ['undici', {}],
  ['node:http (SVC-PROXY-CONNECTION)', { connection: 'keep-alive' }],
];

async function rejection(promise: Promise<unknown>): Promise<HttpError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(HttpError);
  return error as HttpError;
}

describe('Forwarder time bounds', () => {
  it("are undici's: 60 s for the headers, 300 s of silence in the body", () => {
    expect(HEADERS_TIMEOUT_MS).toBe(60_000);
    expect(BODY_TIMEOUT_MS).toBe(300_000);
  });

  it.each(PATHS)(
    '%s: a destination that never answers is a 502 once the headers bound passes',
    async (_path, extra) => {
      const target = await destination(() => {});
      const error = await rejection(
        forwarder().send({ url: target.url, method: 'GET', headers: {}, body: undefined, ...extra }),
      );
      expect(error.status).toBe(502);
      expect(error.detail).toMatch(/did not answer within 0.3 s/);
      await target.closed;
    },
  );

  it.each(PATHS)('%s: headers trickled in a byte at a time do not keep the call open', async (_path, extra) => {
    const target = await destination((socket) => {
      const bytes = Buffer.from(`HTTP/1.1 200 OK\r\nX-Slow: ${'a'.repeat(10_000)}`);
      let sent = 0;
      const timer = setInterval(() => {
        if (socket.destroyed) return clearInterval(timer);
        socket.write(bytes.subarray(sent, ++sent));
      }, 10);
      socket.on('close', () => clearInterval(timer));
    });
    const error = await rejection(
      forwarder().send({ url: target.url, method: 'GET', headers: {}, body: undefined, ...extra }),
    );
    expect(error.status).toBe(502);
    await target.closed;
  });

  it.each(PATHS)('%s: a body that stalls midway breaks off instead of hanging', async (_path, extra) => {
    const target = await destination((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial'));
    const response = await forwarder().send({ url: target.url, method: 'GET', headers: {}, body: undefined, ...extra });
    expect(response.status).toBe(200);
    const read = (async () => {
      for await (const _chunk of response.body) {
        // drained until the stream fails
      }
    })();
    await expect(read).rejects.toThrow();
    await target.closed;
  });

  it.each(PATHS)('%s: a 101 answer is a 502, never handed on as an answer', async (_path, extra) => {
    for (const answer of [
      'HTTP/1.1 101 Switching Protocols\r\n\r\n',
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n',
    ]) {
      const target = await destination((socket) => socket.write(answer));
      const error = await rejection(
        forwarder().send({ url: target.url, method: 'GET', headers: {}, body: undefined, ...extra }),
      );
      expect(error.status).toBe(502);
      expect(error.detail).toMatch(/101 Switching Protocols/);
    }
  });

  it("node:http: a request's abort listener goes with its exchange (one signal over many requests keeps none)", async () => {
    const target = await destination((socket) => {
      socket.on('data', () => {});
      socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok');
    });
    const sender = forwarder();
    const call = new AbortController();
    for (let n = 0; n < 5; n++) {
      const response = await sender.send({
        url: target.url,
        method: 'GET',
        headers: {},
        body: undefined,
        connection: 'close',
        signal: call.signal,
      });
      for await (const _chunk of response.body) {
        // read to its end
      }
    }
    await expect.poll(() => getEventListeners(call.signal, 'abort').length, { timeout: 20_000 }).toBe(0);
  });
});
