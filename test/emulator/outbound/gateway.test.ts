import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it, onTestFinished } from 'vitest';
import { HttpError } from '../../../src/emulator/errors.js';
import {
  OutboundGateway,
  type OutboundInterceptor,
  type OutboundOrigin,
} from '../../../src/emulator/outbound/index.js';
import { runtime } from '../runtime/helpers.js';
import { bodyOf, httpsDestination } from './destination.js';

const PROXY: OutboundOrigin = { tenantId: 't1', kind: 'proxy', id: 'p1', name: 'charges', traceId: 'trace-1' };

function gateway(): OutboundGateway {
  const instance = new OutboundGateway();
  onTestFinished(() => instance.close());
  return instance;
}

/** A plain HTTP destination answering with what it received (method, path, hop header, body). */
async function echo(): Promise<string> {
  const server = http.createServer(async (request, response) => {
    const body = (await bodyOf(request)).toString();
    response.setHeader('content-type', 'application/json');
    response.end(
      JSON.stringify({
        method: request.method,
        path: request.url,
        hop: request.headers['svc-proxy-hop'] ?? null,
        body,
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function text(stream: Readable): Promise<string> {
  return (await bodyOf(stream as never)).toString();
}

/**
 * An observer, as a recorder would be: it passes the request on, and tees the answer's body (the
 * caller still reads it whole).
 */
function observer(seen: unknown[]): OutboundInterceptor {
  return async (request, origin, next) => {
    const response = await next(request);
    const copy = new PassThrough();
    const chunks: Buffer[] = [];
    response.body.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.body.on('end', () =>
      seen.push({
        kind: origin.kind,
        tenantId: origin.tenantId,
        traceId: origin.traceId,
        method: request.method,
        url: request.url.href,
        sent: Buffer.isBuffer(request.body) ? request.body.toString() : (request.body ?? null),
        status: response.status,
        received: Buffer.concat(chunks).toString(),
      }),
    );
    response.body.pipe(copy);
    return { ...response, body: copy };
  };
}

describe('the outbound gateway', () => {
  it('forwards a proxy’s request with the hop header, and user code’s without', async () => {
    const destination = await echo();
    const out = gateway();
    const request = { url: new URL(`${destination}/v1/charges`), method: 'POST', headers: {}, body: '{"a":1}' };
    const proxied = await out.send(request, PROXY);
    expect(JSON.parse(await text(proxied.body))).toEqual({
      method: 'POST',
      path: '/v1/charges',
      hop: '1',
      body: '{"a":1}',
    });
    const fromCode = await out.send(request, { ...PROXY, kind: 'reactor' });
    expect(JSON.parse(await text(fromCode.body)).hop).toBeNull();
  });

  it('runs its interceptors in the order they were added; one removed is no longer asked', async () => {
    const destination = await echo();
    const out = gateway();
    const order: string[] = [];
    const remove = out.use(async (request, _origin, next) => {
      order.push('first');
      return next({ ...request, headers: { ...request.headers, 'x-added': 'yes' } });
    });
    out.use(async (request, _origin, next) => {
      order.push(`second saw ${request.headers['x-added']}`);
      return next(request);
    });
    const answer = await out.send({ url: new URL(destination), method: 'GET', headers: {}, body: undefined }, PROXY);
    await text(answer.body);
    remove();
    await text(
      (await out.send({ url: new URL(destination), method: 'GET', headers: {}, body: undefined }, PROXY)).body,
    );
    expect(order).toEqual(['first', 'second saw yes', 'second saw undefined']);
  });

  it('a refusal of an interceptor is the send’s error, and nothing reaches the network', async () => {
    const out = gateway();
    out.use(async () => {
      throw new HttpError(502, 'No intercept matches POST https://api.example.invalid/v1.');
    });
    const refused = await out
      .send({ url: new URL('https://api.example.invalid/v1'), method: 'POST', headers: {}, body: undefined }, PROXY)
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(HttpError);
    expect((refused as HttpError).detail).toMatch(/No intercept matches/);
  });

  it('an interceptor answers user code’s request in the network’s place, and another observes both requests and their answers', async () => {
    const destination = await httpsDestination(async (request, response) => {
      const body = await bodyOf(request);
      response.setHeader('content-type', 'text/plain');
      response.end(`real answer to ${request.method} ${request.url} with ${body.length} bytes`);
    });
    const out = gateway();
    const seen: unknown[] = [];
    out.use(observer(seen));
    // A mock of one origin for one tenant: the request never leaves (the host does not even resolve).
    out.use(async (request, origin, next) => {
      if (origin.tenantId !== 'mocked' || request.url.origin !== 'https://api.example.invalid') return next(request);
      return {
        status: 201,
        headers: { 'content-type': 'application/json' },
        body: Readable.from([Buffer.from(JSON.stringify({ id: 'ch_1' }))]),
      };
    });
    const rt = runtime({}, out);
    const instance = await rt.load({
      id: 'reactor-outbound',
      version: 1,
      tenant: 'mocked',
      filename: 'charge.js',
      label: 'reactor charge',
      code: `const https = require('https');
        const call = (url, options, body) => new Promise((resolve, reject) => {
          const r = https.request(url, options, (res) => {
            let text = '';
            res.on('data', (c) => (text += c));
            res.on('end', () => resolve({ status: res.statusCode, type: res.headers['content-type'], text }));
          });
          r.on('error', reject);
          r.end(body);
        });
        module.exports = async (req) => ({
          mocked: await call('https://api.example.invalid/v1/charges', { method: 'POST' }, '{"amount":1}'),
          real: await call(req.args.url + '/v1/refunds', { method: 'POST', ca: req.args.ca }, 'refund'),
        });`,
    });
    const result = await instance.invoke(
      { args: { url: destination.url, ca: destination.ca }, configuration: {} },
      { timeoutMs: 5000, requestId: 'trace-42' },
    );
    expect(result.value).toEqual({
      mocked: { status: 201, type: 'application/json', text: '{"id":"ch_1"}' },
      real: { status: 200, type: 'text/plain', text: 'real answer to POST /v1/refunds with 6 bytes' },
    });
    expect(seen).toEqual([
      {
        kind: 'reactor',
        tenantId: 'mocked',
        traceId: 'trace-42',
        method: 'POST',
        url: 'https://api.example.invalid/v1/charges',
        sent: '{"amount":1}',
        status: 201,
        received: '{"id":"ch_1"}',
      },
      {
        kind: 'reactor',
        tenantId: 'mocked',
        traceId: 'trace-42',
        method: 'POST',
        url: `${destination.url}/v1/refunds`,
        sent: 'refund',
        status: 200,
        received: 'real answer to POST /v1/refunds with 6 bytes',
      },
    ]);
  });
});
