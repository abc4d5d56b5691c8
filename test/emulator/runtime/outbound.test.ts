import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { OutboundGateway, type OutboundOrigin } from '../../../src/emulator/outbound/index.js';
import { MAX_OUTBOUND_BODY_BYTES } from '../../../src/emulator/runtime/protocol.js';
import { bodyOf, httpsDestination } from '../outbound/destination.js';
import { invoke, load, rejection, runtime, value } from './helpers.js';

/** Resolves when `request`'s connection to the destination closes (the emulator gave it up). */
function closed(request: IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    if (request.socket.destroyed) resolve();
    else request.socket.once('close', () => resolve());
  });
}

/** A destination that never answers; `arrived` resolves with each request as it comes in. */
async function silent() {
  const arrivals: IncomingMessage[] = [];
  let wake: (() => void) | undefined;
  const destination = await httpsDestination((request) => {
    arrivals.push(request);
    wake?.();
  });
  const arrived = async (): Promise<IncomingMessage> => {
    while (arrivals.length === 0) await new Promise<void>((resolve) => (wake = resolve));
    return arrivals.shift()!;
  };
  return { ...destination, arrived };
}

const sha = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

describe('user code’s https requests leave from the emulator', () => {
  it('a request’s body written over several turns and a large answer stream through whole, in order', async () => {
    const destination = await httpsDestination(async (request, response) => {
      const body = await bodyOf(request);
      response.setHeader('x-received', `${body.length} ${sha(body)} ${request.headers['transfer-encoding'] ?? ''}`);
      // 3 MB back, in pieces: more than the window the emulator holds for a reader.
      const piece = Buffer.alloc(64 * 1024, 'abcdefgh');
      for (let i = 0; i < 48; i++) response.write(piece);
      response.end();
    });
    const rt = runtime();
    const outcome = (await value(
      rt,
      `const https = require('https');
       module.exports = async (req) => {
         const piece = Buffer.alloc(100 * 1024, 'xyz');
         const response = await new Promise((resolve, reject) => {
           const r = https.request(req.args.url + '/upload', { method: 'PUT', ca: req.args.ca }, resolve);
           r.on('error', reject);
           let left = 30;
           const more = () => { if (left-- === 0) return r.end(); r.write(piece); setTimeout(more, 0); };
           more();
         });
         const hash = require('crypto').createHash('sha256');
         let bytes = 0;
         for await (const chunk of response) { hash.update(chunk); bytes += chunk.length; await new Promise((r) => setTimeout(r, 0)); }
         return { received: response.headers['x-received'], bytes, hash: hash.digest('hex'), complete: response.complete };
       };`,
      { args: { url: destination.url, ca: destination.ca } },
      { timeoutMs: 20_000 },
    )) as Record<string, unknown>;
    const sent = Buffer.concat(Array.from({ length: 30 }, () => Buffer.alloc(100 * 1024, 'xyz')));
    expect(outcome).toEqual({
      received: `${sent.length} ${sha(sent)} chunked`,
      bytes: 48 * 64 * 1024,
      hash: sha(Buffer.alloc(48 * 64 * 1024, 'abcdefgh')),
      complete: true,
    });
  });

  it('a body ended at once goes with its length; headers, auth and the method as Node sends them', async () => {
    const destination = await httpsDestination(async (request, response) => {
      const body = await bodyOf(request);
      response.end(
        JSON.stringify({
          method: request.method,
          path: request.url,
          length: request.headers['content-length'] ?? null,
          chunked: request.headers['transfer-encoding'] ?? null,
          auth: request.headers.authorization ?? null,
          custom: request.headers['x-custom'] ?? null,
          bytes: body.length,
        }),
      );
    });
    const outcome = await value(
      runtime(),
      `const https = require('https');
       const send = (options, body) => new Promise((resolve, reject) => {
         const r = https.request(options, (res) => { let t = ''; res.on('data', (c) => (t += c)); res.on('end', () => resolve(JSON.parse(t))); });
         r.on('error', reject);
         r.setHeader('X-Custom', ['a', 'b']);
         r.end(body);
       });
       module.exports = async (req) => {
         const base = { hostname: '127.0.0.1', port: req.args.port, ca: req.args.ca, auth: 'user:pass' };
         const small = await send({ ...base, method: 'post', path: '/small?q=1' }, 'hello');
         const large = await send({ ...base, method: 'POST', path: '/large' }, Buffer.alloc(300 * 1024, 1));
         const r = https.request({ ...base, path: '/late' });
         r.on('error', () => {});
         r.write('x');
         let late;
         try { r.setHeader('x-late', '1'); } catch (e) { late = e.code + ': ' + e.message; }
         r.destroy();
         return { small, large, late };
       };`,
      { args: { port: destination.port, ca: destination.ca } },
      { timeoutMs: 10_000 },
    );
    const auth = `Basic ${Buffer.from('user:pass').toString('base64')}`;
    expect(outcome).toEqual({
      small: { method: 'POST', path: '/small?q=1', length: '5', chunked: null, auth, custom: 'a, b', bytes: 5 },
      large: {
        method: 'POST',
        path: '/large',
        length: String(300 * 1024),
        chunked: null,
        auth,
        custom: 'a, b',
        bytes: 300 * 1024,
      },
      late: 'ERR_HTTP_HEADERS_SENT: Cannot set headers after they are sent to the client',
    });
  });

  it('Node’s TLS defaults hold: a self-signed destination is refused unless its certificate is trusted (ca)', async () => {
    const destination = await httpsDestination((_request, response) => response.end('ok'));
    const outcome = await value(
      runtime(),
      `const https = require('https');
       module.exports = async (req) => {
         const attempt = (extra) => new Promise((resolve) => {
           const r = https.get({ hostname: '127.0.0.1', port: req.args.port, ...extra }, (res) => { res.resume(); res.on('end', () => resolve('answered ' + res.statusCode)); });
           r.on('error', (e) => resolve('refused: ' + e.code));
         });
         return [await attempt({}), await attempt({ ca: req.args.ca }), await attempt({ rejectUnauthorized: false })];
       };`,
      { args: { port: destination.port, ca: destination.ca } },
      { timeoutMs: 10_000 },
    );
    expect(outcome).toEqual(['refused: DEPTH_ZERO_SELF_SIGNED_CERT', 'answered 200', 'answered 200']);
  });

  it('a request under way when its call returns is given up: the destination sees its connection close', async () => {
    const destination = await silent();
    const rt = runtime();
    const returned = await value(
      rt,
      `module.exports = async (req) => {
         const r = require('https').request(req.args.url + '/hang', { method: 'POST', ca: req.args.ca });
         r.on('error', () => {});
         r.end('body');
         await new Promise((resolve) => setTimeout(resolve, 200));
         return 'returned';
       };`,
      { args: { url: destination.url, ca: destination.ca } },
    );
    expect(returned).toBe('returned');
    const request = await destination.arrived();
    await closed(request);
  });

  it('a call whose code is deleted under it ends with a 409, its request given up', async () => {
    const destination = await silent();
    const rt = runtime();
    const instance = await load(
      rt,
      `module.exports = (req) => new Promise((resolve, reject) => {
         const r = require('https').get(req.args.url + '/hang', { ca: req.args.ca }, resolve);
         r.on('error', reject);
       });`,
    );
    const call = invoke(instance, { args: { url: destination.url, ca: destination.ca } }, { timeoutMs: 10_000 });
    const request = await destination.arrived();
    await rt.unload(instance.id, 'reactor hang');
    expect((await rejection(call)).status).toBe(409);
    await closed(request);
  });

  it('timeouts, abort and an AbortSignal behave as on a ClientRequest', async () => {
    const destination = await silent();
    const outcome = await value(
      runtime(),
      `const https = require('https');
       module.exports = async (req) => {
         const options = { hostname: '127.0.0.1', port: req.args.port, ca: req.args.ca };
         const timedOut = await new Promise((resolve) => {
           const r = https.get({ ...options, path: '/slow', timeout: 150 });
           r.on('timeout', () => { r.destroy(); resolve('timeout'); });
           r.on('error', () => {});
         });
         const aborted = await new Promise((resolve) => {
           const controller = new AbortController();
           const r = https.get({ ...options, path: '/aborted', signal: controller.signal });
           r.on('error', (e) => resolve(e.code));
           setTimeout(() => controller.abort(), 50);
         });
         return { timedOut, aborted };
       };`,
      { args: { port: destination.port, ca: destination.ca } },
      { timeoutMs: 10_000 },
    );
    expect(outcome).toEqual({ timedOut: 'timeout', aborted: 'ABORT_ERR' });
    // The one that timed out reached the destination, and was given up there (the aborted one may not have).
    await closed(await destination.arrived());
  });

  it('a request’s body and its answer are each bounded (MAX_OUTBOUND_BODY_BYTES): beyond, the request fails with a clear error', async () => {
    const destination = await httpsDestination((request, response) => {
      request.resume();
      // More than the bound, in 1 MB pieces, as fast as the reader takes them.
      const piece = Buffer.alloc(1024 * 1024, 'a');
      let left = MAX_OUTBOUND_BODY_BYTES / piece.length + 1;
      const more = () => {
        while (left-- > 0) if (!response.write(piece)) return void response.once('drain', more);
        response.end();
      };
      more();
    });
    const outcome = await value(
      runtime(),
      `const https = require('https');
       module.exports = async (req) => {
         const options = { hostname: '127.0.0.1', port: req.args.port, ca: req.args.ca, method: 'POST' };
         const sent = await new Promise((resolve) => {
           const r = https.request({ ...options, path: '/big-upload' });
           r.on('error', (e) => resolve(e.code + ': ' + e.message));
           r.end(Buffer.alloc(req.args.limit + 1));
         });
         const received = await new Promise((resolve) => {
           const r = https.request({ ...options, path: '/big-answer' }, (res) => {
             let bytes = 0;
             res.on('data', (c) => (bytes += c.length));
             res.on('error', (e) => resolve(e.code + ': ' + e.message + ' after ' + (bytes <= req.args.limit ? 'at most the limit' : bytes)));
             res.on('end', () => resolve('ended after ' + bytes));
           });
           r.on('error', (e) => resolve('request ' + e.code));
           r.end();
         });
         return { sent, received };
       };`,
      { args: { port: destination.port, ca: destination.ca, limit: MAX_OUTBOUND_BODY_BYTES } },
      { timeoutMs: 30_000 },
    );
    expect(outcome).toEqual({
      sent: 'ERR_SVC_BODY_TOO_LARGE: The request body is over 48 MB, the most a request of the sandbox may send.',
      received: `ERR_SVC_ANSWER_TOO_LARGE: The answer of ${destination.url} is over 48 MB, the most a request of the sandbox may receive. after at most the limit`,
    });
  }, 60_000);

  it('a destination that cannot be reached fails the request with Node’s code; each module sends its own protocol', async () => {
    const outcome = await value(
      runtime(),
      `const https = require('https');
       module.exports = async () => {
         const refused = await new Promise((resolve) => {
           const r = https.get('https://127.0.0.1:1/');
           r.on('error', (e) => resolve(e.code + ' ' + Object.getOwnPropertyNames(e).sort().join()));
         });
         const refusedPlain = await new Promise((resolve) => {
           require('http').get('http://127.0.0.1:1/').on('error', (e) => resolve(e.code));
         });
         let plain;
         try { https.get('http://127.0.0.1:1/'); } catch (e) { plain = e.name + ' ' + e.code + ': ' + e.message; }
         return { refused, refusedPlain, plain };
       };`,
    );
    expect(outcome).toEqual({
      refused: 'ECONNREFUSED code,message,stack',
      refusedPlain: 'ECONNREFUSED',
      plain: 'TypeError ERR_INVALID_PROTOCOL: Protocol "http:" not supported. Expected "https:"',
    });
  });

  it('goes through the runtime’s gateway in the name of its code and call; a refusal there is the request’s error', async () => {
    const origins: OutboundOrigin[] = [];
    const gateway = new OutboundGateway();
    gateway.use(async (_request, origin) => {
      origins.push(origin);
      throw Object.assign(new Error('stopped here'), { detail: 'Mocked: no destination.' });
    });
    const rt = runtime({}, gateway);
    const instance = await rt.load({
      id: 'transform-1',
      group: 'proxy-1',
      tenant: 'tenant-a',
      version: 1,
      filename: 'request.js',
      label: 'the request transform of proxy p',
      code: `module.exports = () => new Promise((resolve) => {
        const r = require('https').get('https://api.example.invalid/x');
        r.on('error', (e) => resolve(e.message));
      });`,
    });
    const outcome = await instance.invoke({ args: null, configuration: {} }, { timeoutMs: 5000, requestId: 'trace-7' });
    expect(outcome.value).toBe('Mocked: no destination.');
    expect(origins).toEqual([
      {
        tenantId: 'tenant-a',
        kind: 'transform',
        id: 'transform-1',
        name: 'the request transform of proxy p',
        traceId: 'trace-7',
      },
    ]);
  });
});
