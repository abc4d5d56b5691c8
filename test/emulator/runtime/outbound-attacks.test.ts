/**
 * User code's `https` requests relayed through the emulator, attacked: by user code over a real
 * runtime, and (OutboundRequests alone) by a sandbox process that sends hostile frames.
 */
import type { IncomingMessage } from 'node:http';
import type { Server } from 'node:https';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { OutboundGateway } from '../../../src/emulator/outbound/index.js';
import { MAX_OUTBOUND_HEAD_BYTES, MAX_OUTBOUND_TLS_BYTES } from '../../../src/emulator/runtime/outbound-bounds.js';
import { MAX_CHANNEL_BACKLOG_BYTES, OutboundRequests } from '../../../src/emulator/runtime/outbound-requests.js';
import {
  OUTBOUND_CHUNK_BYTES,
  OUTBOUND_WINDOW_BYTES,
  type HttpsReply,
} from '../../../src/emulator/runtime/protocol.js';
import type { UserAnswer } from '../../../src/emulator/runtime/types.js';
import { bodyOf, httpsDestination } from '../outbound/destination.js';
import { runtime, value } from './helpers.js';
import { eventually } from '../../helpers/wait.js';

/** The https server a request arrived at (to change how it keeps connections). */
const serverOf = (request: IncomingMessage) => (request.socket as Socket & { server: Server }).server;

describe('user code’s requests cannot turn the relay against the emulator', () => {
  it('a request given up while an interceptor held it is never sent', async () => {
    const arrived: string[] = [];
    const destination = await httpsDestination((request, response) => {
      arrived.push(request.url ?? '');
      response.end('ok');
    });
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const outcomes: string[] = [];
    const gateway = new OutboundGateway();
    gateway.use(async (request, _origin, next) => {
      await held;
      return next(request).catch((error: Error & { cause?: { code?: string } }) => {
        outcomes.push(error.cause?.code ?? error.message);
        throw error;
      });
    });
    const returned = await value(
      runtime({}, gateway),
      `module.exports = async (req) => {
         const r = require('https').get(req.args.url + '/after-the-call', { ca: req.args.ca });
         r.on('error', () => {});
         await new Promise((resolve) => setTimeout(resolve, 50));
         return 'returned';
       };`,
      { args: { url: destination.url, ca: destination.ca } },
    );
    expect(returned).toBe('returned');
    release();
    await eventually(() => expect(outcomes).toEqual(['ABORT_ERR']), 10_000);
    expect(arrived).toEqual([]);
  });

  it('idle connections of user code close, and a tenant holds at most 256 however many TLS options it varies', async () => {
    const open = new Set<Socket>();
    let peak = 0;
    const destination = await httpsDestination((request, response) => {
      // A destination that keeps every connection open for as long as the client does.
      serverOf(request).keepAliveTimeout = 0;
      if (!open.has(request.socket)) {
        open.add(request.socket);
        peak = Math.max(peak, open.size);
        request.socket.once('close', () => open.delete(request.socket));
      }
      response.end('ok');
    });
    // Idle connections close after half a second (10 s by default): that they close is what is tested.
    const outcome = await value(
      runtime({}, new OutboundGateway({ userIdleSocketMs: 500 })),
      `const https = require('https');
       module.exports = async (req) => {
         // Each servername is a destination of its own to an agent: a connection of its own.
         const one = (i) => new Promise((resolve) => {
           const options = { hostname: '127.0.0.1', port: req.args.port, rejectUnauthorized: false, servername: 'n' + i + '.example' };
           const r = https.get(options, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); });
           r.on('error', (e) => resolve(e.code));
         });
         const statuses = [];
         for (let i = 0; i < 300; i += 50) statuses.push(...(await Promise.all(Array.from({ length: 50 }, (_, k) => one(i + k)))));
         return statuses.filter((status) => status !== 200);
       };`,
      { args: { port: destination.port } },
      { timeoutMs: 50_000 },
    );
    expect(outcome).toEqual([]);
    expect(peak).toBeLessThanOrEqual(256);
    await eventually(() => expect(open.size).toBe(0), 30_000);
  }, 60_000);

  it('a CONNECT answered 2xx fails at once (no tunnel is given) rather than hold its request until the call ends', async () => {
    const destination = await httpsDestination((request, response) => {
      const server = serverOf(request);
      if (server.listenerCount('connect') === 0)
        server.on('connect', (_request, socket: Socket) => socket.end('HTTP/1.1 200 Connection Established\r\n\r\n'));
      response.end('ok');
    });
    const outcome = await value(
      runtime(),
      `const https = require('https');
       const send = (options) => new Promise((resolve) => {
         const r = https.request(options, (res) => { res.resume(); resolve('answered ' + res.statusCode); });
         r.on('error', (e) => resolve('error ' + e.code));
         r.end();
       });
       module.exports = async (req) => {
         const base = { hostname: '127.0.0.1', port: req.args.port, ca: req.args.ca };
         return [await send({ ...base, path: '/' }), await send({ ...base, method: 'CONNECT', path: '127.0.0.1:1' })];
       };`,
      { args: { port: destination.port, ca: destination.ca } },
      { timeoutMs: 10_000 },
    );
    expect(outcome).toEqual(['answered 200', 'error ECONNRESET']);
  });

  it('new TLS material is parsed within a budget of its tenant; the same options reuse their context', async () => {
    const destination = await httpsDestination((_request, response) => response.end('ok'));
    // A budget that does not refill: however long the requests take on a loaded machine, the third is over it.
    const outcome = await value(
      runtime({}, new OutboundGateway({ tlsBytesPerSecond: 0 })),
      `const https = require('https');
       const send = (ca) => new Promise((resolve) => {
         const r = https.get({ hostname: '127.0.0.1', port: req.port, ca }, (res) => { res.resume(); resolve('answered ' + res.statusCode); });
         r.on('error', (e) => resolve(e.code));
       });
       let req;
       module.exports = async (call) => {
         req = call.args;
         // Each about 490 KB (as a bundle of 700 certificates would be), each a new string to parse,
         // given at once (the budget's refill while they parse is not what is tested).
         const bundle = req.ca.repeat(Math.floor((490 * 1024) / req.ca.length));
         const outcomes = await Promise.all([1, 2, 3].map((i) => send(bundle + '\\n'.repeat(i))));
         outcomes.push(await send(bundle + '\\n'));
         return outcomes;
       };`,
      { args: { port: destination.port, ca: destination.ca } },
      { timeoutMs: 20_000 },
    );
    expect(outcome).toEqual(['answered 200', 'answered 200', 'ERR_SVC_TLS_BUDGET', 'answered 200']);
  });

  it('a request’s URL and headers, and its TLS options, are bounded: beyond, it fails and is not sent', async () => {
    const arrived: string[] = [];
    const destination = await httpsDestination((request, response) => {
      arrived.push(request.url ?? '');
      response.end('ok');
    });
    const outcome = await value(
      runtime(),
      `const https = require('https');
       const send = (options) => new Promise((resolve) => {
         const r = https.get(options, (res) => { res.resume(); resolve('answered ' + res.statusCode); });
         r.on('error', (e) => resolve(e.code + ': ' + e.message));
       });
       module.exports = async (req) => {
         const base = { hostname: '127.0.0.1', port: req.args.port, ca: req.args.ca };
         return {
           head: await send({ ...base, path: '/head', headers: { 'x-big': 'a'.repeat(req.args.head) } }),
           tls: await send({ ...base, path: '/tls', ca: req.args.ca + '\\n'.repeat(req.args.tls) }),
           fine: await send({ ...base, path: '/fine', headers: { 'x-small': 'a'.repeat(8000) } }),
         };
       };`,
      {
        args: {
          port: destination.port,
          ca: destination.ca,
          head: MAX_OUTBOUND_HEAD_BYTES,
          tls: MAX_OUTBOUND_TLS_BYTES,
        },
      },
      { timeoutMs: 10_000 },
    );
    expect(outcome).toEqual({
      head: 'ERR_SVC_HEADERS_TOO_LARGE: The URL and headers of the request are over 64 KB, the most a request of the sandbox may send.',
      tls: 'ERR_SVC_TLS_OPTIONS_TOO_LARGE: The TLS options of the request (ca, cert, key...) are over 512 KB, the most a request of the sandbox may give.',
      fine: 'answered 200',
    });
    expect(arrived).toEqual(['/fine']);
  });
});

describe('an interceptor that answers what is not an answer', () => {
  it('fails the request of user code with its error, and the emulator goes on', async () => {
    const gateway = new OutboundGateway();
    gateway.use(async () => ({ status: 200, headers: {}, body: 'not a stream' as unknown as Readable }));
    const outcome = await value(
      runtime({}, gateway),
      `module.exports = () => new Promise((resolve) => {
         const r = require('https').get('https://api.example.invalid/x', (res) => {
           res.on('error', (e) => resolve('answer ' + e.message));
           res.resume();
         });
         r.on('error', (e) => resolve('request ' + e.message));
       });`,
    );
    expect(outcome).toBe('request The answer to the request has no body stream.');
  });
});

describe('headers that name the framing of a body are kept as Node would send them', () => {
  it('a Transfer-Encoding of the code’s own goes as it is, with no Content-Length beside it', async () => {
    const destination = await httpsDestination(async (request, response) => {
      const body = await bodyOf(request);
      const { 'transfer-encoding': te, 'content-length': length } = request.headers;
      response.end(`${te ?? '-'} ${length ?? '-'} ${body.toString()}`);
    });
    const outcome = await value(
      runtime(),
      `const https = require('https');
       const send = (headers, body) => new Promise((resolve) => {
         const options = { hostname: '127.0.0.1', port: req.port, ca: req.ca, method: 'POST', headers };
         const r = https.request(options, (res) => { let t = ''; res.on('data', (c) => (t += c)); res.on('end', () => resolve(res.statusCode + ' ' + t)); });
         r.on('error', (e) => resolve('error ' + e.code));
         r.end(body);
       });
       let req;
       module.exports = async (call) => {
         req = call.args;
         return [await send({ 'Transfer-Encoding': 'chunked' }, 'hello'), await send({ 'Content-Length': '5' }, 'hello')];
       };`,
      { args: { port: destination.port, ca: destination.ca } },
      { timeoutMs: 10_000 },
    );
    expect(outcome).toEqual(['200 chunked - hello', '200 - 5 hello']);
  });
});

/** An endless answer, and the relay of one request opened by a (hostile) sandbox. */
function relay(backlog: () => number = () => 0) {
  const posted: HttpsReply[] = [];
  const body = new Readable({ read: () => body.push(Buffer.alloc(16 * 1024, 'a')) });
  const answer: UserAnswer = { status: 200, headers: {}, body };
  const requests = new OutboundRequests(
    (message) => posted.push(message),
    () => Promise.resolve(answer),
    backlog,
  );
  requests.receive(
    {
      type: 'https',
      id: 1,
      call: 1,
      vid: 'v',
      method: 'GET',
      url: 'https://x.example/',
      headers: {},
      tls: {},
      body: '',
      end: true,
    },
    { instance: 'reactor-1', requestId: undefined, call: 1, vid: 'v' },
  );
  const sent = () =>
    posted.reduce((bytes, m) => bytes + (m.type === 'https-data' ? Buffer.from(m.data, 'base64').length : 0), 0);
  return { requests, body, sent };
}

/** A few turns of the event loop, for a stream to flow as far as it may. */
const turns = async (count = 20) => {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('a sandbox process that abuses the answer’s window is stopped or held back', () => {
  it('acknowledging more of an answer than it was sent breaks the protocol (the process is stopped)', async () => {
    const { requests, body, sent } = relay();
    await turns();
    expect(sent()).toBeGreaterThan(0);
    expect(sent()).toBeLessThanOrEqual(OUTBOUND_WINDOW_BYTES + 64 * 1024);
    expect(() => requests.receive({ type: 'https-read', id: 1, bytes: 2 ** 50 }, undefined)).toThrow(
      'it acknowledged more of an answer than it was sent',
    );
    requests.endAll();
    expect(body.destroyed).toBe(true);
  });

  it('a request whose head is over the bounds is refused by the emulator too, never sent', () => {
    const posted: HttpsReply[] = [];
    let sent = 0;
    const requests = new OutboundRequests(
      (message) => posted.push(message),
      () => {
        sent++;
        return new Promise<UserAnswer>(() => {});
      },
    );
    const owner = { instance: 'reactor-1', requestId: undefined, call: 1, vid: 'v' };
    const open = { type: 'https', call: 1, vid: 'v', method: 'GET', body: '', end: true } as const;
    const url = 'https://x.example/';
    requests.receive(
      { ...open, id: 1, url, headers: { 'x-big': 'a'.repeat(MAX_OUTBOUND_HEAD_BYTES) }, tls: {} },
      owner,
    );
    requests.receive({ ...open, id: 2, url, headers: {}, tls: { ca: 'a'.repeat(MAX_OUTBOUND_TLS_BYTES + 1) } }, owner);
    expect(posted.map((m) => (m.type === 'https-error' ? `${m.id} ${m.code}` : m.type))).toEqual([
      '1 ERR_SVC_HEADERS_TOO_LARGE',
      '2 ERR_SVC_TLS_OPTIONS_TOO_LARGE',
    ]);
    expect(sent).toBe(0);
  });

  it('answers wait while the sandbox process does not read its channel, whatever it acknowledges, and go on when it does', async () => {
    let backlog = 0;
    const { requests, sent } = relay(() => backlog);
    await turns();
    // The sandbox acknowledges all it was sent, but reads none of it: the channel's backlog grows.
    let acknowledged = 0;
    for (let round = 0; round < 20; round++) {
      backlog = sent() - acknowledged > 0 ? MAX_CHANNEL_BACKLOG_BYTES + sent() : backlog;
      const bytes = sent() - acknowledged;
      acknowledged += bytes;
      if (bytes > 0) requests.receive({ type: 'https-read', id: 1, bytes }, undefined);
      await turns(5);
    }
    const held = sent();
    expect(held).toBeLessThanOrEqual(OUTBOUND_WINDOW_BYTES + OUTBOUND_CHUNK_BYTES);
    // The channel drained: the answer goes on.
    backlog = 0;
    requests.drained();
    await turns();
    expect(sent()).toBeGreaterThan(held);
    requests.endAll();
  });
});
