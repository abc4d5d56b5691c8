import { createServer, type ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { http } from '../helpers/emulator.js';
import { spawnSvc } from '../helpers/process.js';
import { tempDir } from '../helpers/temp.js';

const MANAGEMENT_KEY = 'shutdown-management-key-1';
const PRIVATE_KEY = 'shutdown-private-key-0001';
const ANSWER_BYTES = 200 * 1024;
const jsonEvent = (event: string) => (line: string) => line.startsWith('{') && JSON.parse(line).event === event;

/** A destination that holds every request until `release()`, then answers each with 200 KB. */
async function heldDestination() {
  const held: ServerResponse[] = [];
  let released = false;
  const answer = (response: ServerResponse) =>
    response
      .writeHead(200, { 'content-type': 'text/plain', 'content-length': ANSWER_BYTES })
      .end('x'.repeat(ANSWER_BYTES));
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => (released ? answer(response) : held.push(response)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get arrived() {
      return held.length;
    },
    release() {
      released = true;
      for (const response of held.splice(0)) answer(response);
    },
  };
}

/** Whether a new TCP connection to `url` is refused. */
function refused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('stopping svc serve', () => {
  it('on SIGTERM refuses new connections, finishes the proxied and reactor calls in flight with whole answers, and exits 0', async () => {
    const cwd = await tempDir();
    const destination = await heldDestination();
    const serve = spawnSvc(['serve', '--port', '0', '--in-memory'], {
      cwd,
      env: { SVC_MANAGEMENT_KEY: MANAGEMENT_KEY, SVC_PRIVATE_KEY: PRIVATE_KEY },
    });
    const { url } = JSON.parse(await serve.waitForLine(jsonEvent('listening')));
    await serve.waitForLine(jsonEvent('ready'));

    const proxy = await http(`${url}/proxies`, 'POST', {
      key: MANAGEMENT_KEY,
      body: { name: 'held', destination_url: destination.url, require_auth: false },
    });
    expect(proxy.status, proxy.text).toBe(201);
    const code =
      "module.exports = async (req) => { console.log('started', req.args.n); await new Promise((resolve) => setTimeout(resolve, 1500)); return { raw: { n: req.args.n } }; };";
    const reactor = await http(`${url}/reactors`, 'POST', {
      key: MANAGEMENT_KEY,
      body: { name: 'slow', code, configuration: {} },
    });
    expect(reactor.status, reactor.text).toBe(201);

    const proxied = Array.from({ length: 20 }, () =>
      http(`${url}/proxy`, 'GET', { headers: { 'svc-proxy-key': proxy.body.key } }),
    );
    const reacted = Array.from({ length: 4 }, (_, n) =>
      http(`${url}/reactors/${reactor.body.id}/react`, 'POST', { key: PRIVATE_KEY, body: { args: { n } } }),
    );
    let settled = 0;
    for (const call of [...proxied, ...reacted])
      void call.then(
        () => settled++,
        () => settled++,
      );
    await until(() => destination.arrived === proxied.length, 'every proxied call to reach the destination');
    await until(
      () => serve.lines.filter((line) => line.includes('"event":"console"')).length === reacted.length,
      'every reactor call to start',
    );

    serve.child.kill('SIGTERM');
    await serve.waitForLine(jsonEvent('stopping'));
    await until(() => refused(url), 'new connections to be refused');
    // refused while the proxied calls were still held at the destination
    expect(settled).toBeLessThanOrEqual(reacted.length);
    destination.release();

    for (const result of await Promise.all(proxied)) {
      expect(result.status).toBe(200);
      expect(result.text.length).toBe(ANSWER_BYTES);
    }
    expect((await Promise.all(reacted)).map((result) => [result.status, result.body])).toEqual(
      reacted.map((_, n) => [200, { raw: { n } }]),
    );
    expect(await serve.exited).toEqual({ code: 0, signal: null });
    expect(JSON.parse(serve.lines.at(-1)!)).toMatchObject({ event: 'stopped', time: expect.any(String) });
    expect(serve.stderr()).toBe('');
  });
});
