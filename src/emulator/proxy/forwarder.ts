import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import type { Pool } from 'undici';
import { HttpError } from '../errors.js';

export interface ForwardRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: Buffer | string | undefined;
  /** SVC-PROXY-KEEP-ALIVE / SVC-PROXY-CONNECTION values for this one call (Enterprise). */
  keepAlive?: string | undefined;
  connection?: string | undefined;
}

export interface ForwardResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

const HEADERS_TIMEOUT_MS = 60_000;

/**
 * Set on every call a proxy forwards. The emulator refuses it on its own admin routes and on
 * `/proxy` itself: a proxy pointed at the emulator can neither borrow its loopback trust nor loop.
 */
export const PROXY_HOP_HEADER = 'svc-proxy-hop';

/**
 * Sends proxied requests to their destinations over keep-alive undici Pools, one per origin.
 * undici refuses to set KEEP-ALIVE and CONNECTION itself, so the rare call that must carry them
 * (the Enterprise SVC-PROXY-* headers) goes through node:http instead.
 */
export class Forwarder {
  private readonly pools = new Map<string, Pool>();
  /** undici is loaded with the first proxied call: an emulator that proxies nothing never pays for it. */
  private undici: Promise<typeof import('undici')> | undefined;

  async send(request: ForwardRequest): Promise<ForwardResponse> {
    try {
      if (request.keepAlive !== undefined || request.connection !== undefined) return await this.sendWithNodeHttp(request);
      const pool = this.pools.get(request.url.origin) ?? (await this.newPool(request.url.origin));
      const response = await pool.request({
        path: `${request.url.pathname}${request.url.search}`,
        method: request.method as never,
        headers: { ...request.headers, [PROXY_HOP_HEADER]: '1' },
        body: request.body,
        headersTimeout: HEADERS_TIMEOUT_MS,
      });
      return { status: response.statusCode, headers: response.headers, body: response.body };
    } catch (error) {
      throw unreachable(request.url, error as NodeJS.ErrnoException);
    }
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((pool) => pool.destroy()));
  }

  private async newPool(origin: string): Promise<Pool> {
    const { Pool } = await (this.undici ??= import('undici'));
    // Another call may have made it while undici loaded.
    let pool = this.pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, { connections: 128, pipelining: 1, keepAliveTimeout: 10_000 });
      this.pools.set(origin, pool);
    }
    return pool;
  }

  private sendWithNodeHttp(request: ForwardRequest): Promise<ForwardResponse> {
    const client = request.url.protocol === 'https:' ? https : http;
    const headers: Record<string, string> = { ...request.headers, [PROXY_HOP_HEADER]: '1' };
    if (request.keepAlive !== undefined) headers['Keep-Alive'] = request.keepAlive;
    if (request.connection !== undefined) headers.Connection = request.connection;
    if (request.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(request.body));
    return new Promise((resolve, reject) => {
      const outgoing = client.request(request.url, { method: request.method, headers, timeout: HEADERS_TIMEOUT_MS, agent: false }, (incoming) =>
        resolve({ status: incoming.statusCode ?? 502, headers: incoming.headers, body: incoming }),
      );
      outgoing.on('timeout', () => outgoing.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
      outgoing.on('error', reject);
      outgoing.end(request.body);
    });
  }
}

function unreachable(url: URL, error: NodeJS.ErrnoException): HttpError {
  if (error instanceof HttpError) return error;
  const reason = error.code === 'ECONNREFUSED' ? 'connection refused' : error.code === 'ENOTFOUND' ? 'host not found' : error.code ?? error.message;
  return new HttpError(502, `The destination ${url.origin} could not be reached: ${reason}.`, undefined, 'Destination unreachable');
}
