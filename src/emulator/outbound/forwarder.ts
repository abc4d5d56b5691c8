import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import type { Pool } from 'undici';
import { PROXY_HOP_HEADER } from '../../api/headers.js';
import { HttpError } from '../errors.js';
import type { OutboundRequest, OutboundResponse } from './types.js';
import { UserConnections } from './user-connections.js';

/** How long a destination may take to send its answer's headers (undici's `headersTimeout`). */
export const HEADERS_TIMEOUT_MS = 60_000;
/** How long a destination may fall silent while sending the body (undici's default `bodyTimeout`). */
export const BODY_TIMEOUT_MS = 300_000;

export interface ForwarderOptions {
  /** Both forwarding paths use the same bounds; tests shorten them. */
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  /** How fast a pool's budget of new TLS material refills, in bytes a second (user-connections.ts); tests set 0. */
  tlsBytesPerSecond?: number;
  /** How long a connection of user code's requests may sit idle before it is closed. Default 10 s. */
  userIdleSocketMs?: number;
}

/** How one request goes out. */
export interface SendOptions {
  /** Marks it as forwarded by a proxy of this emulator (a proxy pointing at /proxy is a loop). Default true. */
  hop?: boolean;
  /** Whose keep-alive connections a request with TLS options of its own uses (a tenant's). */
  pool?: string;
}

/**
 * Sends requests to their destinations: a proxy's over keep-alive undici Pools, one per origin.
 * undici refuses to set KEEP-ALIVE and CONNECTION itself, so the rare call that must carry them
 * (the Enterprise SVC-PROXY-* headers) goes through node:http instead, within the same time bounds,
 * as do user code's requests (their TLS options are Node's `https.request`'s, over a keep-alive
 * agent per pool) and bodies that stream. No path switches protocols: a destination answering 101
 * is a 502.
 */
export class Forwarder {
  private readonly pools = new Map<string, Pool>();
  /** User code's: a keep-alive agent and TLS contexts per pool (a tenant's). */
  private readonly users: UserConnections;
  /** What a URL's getters give, per URL object: they parse on every read (the pipeline reuses a proxy's URL). */
  private readonly parts = new WeakMap<URL, { origin: string; path: string }>();
  /** undici is loaded with the first proxied call: an emulator that proxies nothing never pays for it. */
  private undici: Promise<typeof import('undici')> | undefined;
  private readonly headersTimeoutMs: number;
  private readonly bodyTimeoutMs: number;

  constructor(options: ForwarderOptions = {}) {
    this.headersTimeoutMs = options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
    this.bodyTimeoutMs = options.bodyTimeoutMs ?? BODY_TIMEOUT_MS;
    this.users = new UserConnections(options.tlsBytesPerSecond, options.userIdleSocketMs);
  }

  async send(request: OutboundRequest, options: SendOptions = {}): Promise<OutboundResponse> {
    const hop = options.hop ?? true;
    try {
      if (
        request.keepAlive !== undefined ||
        request.connection !== undefined ||
        request.tls !== undefined ||
        request.body instanceof Readable
      )
        return await this.sendWithNodeHttp(request, hop, options.pool ?? '');
      const { origin, path } = this.partsOf(request.url);
      const pool = this.pools.get(origin) ?? (await this.newPool(origin));
      const response = await pool.request({
        path,
        method: request.method as never,
        headers: hop ? { ...request.headers, [PROXY_HOP_HEADER]: '1' } : request.headers,
        body: request.body,
        headersTimeout: this.headersTimeoutMs,
        bodyTimeout: this.bodyTimeoutMs,
        onInfo: refuseSwitching,
        ...(request.signal && { signal: request.signal }),
      });
      return { status: response.statusCode, headers: response.headers, body: response.body };
    } catch (error) {
      throw unreachable(request.url, error as NodeJS.ErrnoException, this.headersTimeoutMs);
    }
  }

  /** Ends the connections of user code's requests of `pool` (a tenant deleted). */
  forgetPool(pool: string): void {
    this.users.forget(pool);
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    this.users.close();
    await Promise.all(pools.map((pool) => pool.destroy()));
  }

  private partsOf(url: URL): { origin: string; path: string } {
    let parts = this.parts.get(url);
    if (!parts) this.parts.set(url, (parts = { origin: url.origin, path: `${url.pathname}${url.search}` }));
    return parts;
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

  private async sendWithNodeHttp(request: OutboundRequest, hop: boolean, pool: string): Promise<OutboundResponse> {
    const client = request.url.protocol === 'https:' ? https : http;
    const headers: Record<string, string> = hop
      ? { ...request.headers, [PROXY_HOP_HEADER]: '1' }
      : { ...request.headers };
    if (request.keepAlive !== undefined) headers['Keep-Alive'] = request.keepAlive;
    if (request.connection !== undefined) headers.Connection = request.connection;
    const { body } = request;
    // A body whose framing the request names itself (user code's Transfer-Encoding: chunked) keeps it:
    // both headers at once is a request a server refuses.
    if (
      body !== undefined &&
      !(body instanceof Readable) &&
      !hasHeader(headers, 'content-length') &&
      !hasHeader(headers, 'transfer-encoding')
    )
      headers['Content-Length'] = String(Buffer.byteLength(body));
    // User code's TLS options, over its pool's agent and a context made once, its material parsed
    // off this thread (or refused: ERR_SVC_TLS_BUDGET, ERR_SVC_TLS_TIMEOUT, ERR_SVC_TLS_REFUSED).
    const { tls } = request;
    let connection: https.RequestOptions;
    try {
      connection = tls !== undefined && client === https ? await this.users.optionsOf(pool, tls) : { agent: false };
    } catch (error) {
      if (body instanceof Readable) body.destroy();
      throw error;
    }
    const options: https.RequestOptions = {
      method: request.method,
      headers,
      ...(tls as https.RequestOptions),
      ...connection,
    };
    return new Promise((resolve, reject) => {
      // Given up before it left (an interceptor, or its TLS material's parse, took its time): it never does.
      if (request.signal?.aborted) {
        if (body instanceof Readable) body.destroy();
        return reject(Object.assign(new Error('The request was given up before it was sent.'), { code: 'ABORT_ERR' }));
      }
      const outgoing = client.request(request.url, options, (incoming) => {
        clearTimeout(headersTimer);
        // Node hands a 101 without Upgrade headers over as a final answer: it is none.
        if ((incoming.statusCode ?? 0) < 200) {
          outgoing.destroy();
          reject(switchingProtocols(request.url));
          return;
        }
        // A socket timeout, unlike a timer, restarts with every chunk: undici's bodyTimeout.
        incoming.setTimeout(this.bodyTimeoutMs, () =>
          incoming.destroy(Object.assign(new Error('the answer stalled'), { code: 'ETIMEDOUT' })),
        );
        resolve({
          status: incoming.statusCode ?? 502,
          statusMessage: incoming.statusMessage,
          headers: incoming.headers,
          body: incoming,
        });
      });
      // One timer for everything before the headers (connecting included), however slowly they trickle in.
      const headersTimer = setTimeout(
        () => outgoing.destroy(Object.assign(new Error('timed out'), { code: 'UND_ERR_HEADERS_TIMEOUT' })),
        this.headersTimeoutMs,
      );
      outgoing.on('upgrade', (_incoming, socket) => {
        clearTimeout(headersTimer);
        socket.destroy();
        reject(switchingProtocols(request.url));
      });
      outgoing.on('error', (error) => {
        clearTimeout(headersTimer);
        if (body instanceof Readable) body.destroy();
        reject(error);
      });
      // Given up: the connection goes (the answer with it, if it came).
      const abort = () => outgoing.destroy(new Error('aborted'));
      request.signal?.addEventListener('abort', abort, { once: true });
      // Closed with neither an answer nor an error (a CONNECT answered 2xx, which Node takes for a
      // tunnel nobody asked for, and drops): it fails rather than wait forever. Closed either way
      // (the answer read, or broken off), the exchange is over: a signal that outlives it (user
      // code's call, over many requests) keeps no listener of it.
      outgoing.on('close', () => {
        clearTimeout(headersTimer);
        request.signal?.removeEventListener('abort', abort);
        reject(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
      });
      if (!(body instanceof Readable)) outgoing.end(body);
      else {
        body.on('error', (error) => outgoing.destroy(error));
        body.pipe(outgoing);
      }
    });
  }
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((key) => key.toLowerCase() === name);
}

/** A 101 that undici would have waited past. */
class SwitchedProtocols extends Error {}

/**
 * undici takes a bare 101 for an informational answer and waits for another answer that never
 * comes. Thrown here, it drops the connection and fails the request with this error (cheaper on
 * every call than an AbortSignal).
 */
function refuseSwitching({ statusCode }: { statusCode: number }): void {
  if (statusCode === 101) throw new SwitchedProtocols('101');
}

function switchingProtocols(url: URL): HttpError {
  return new HttpError(
    502,
    `The destination ${url.origin} answered 101 Switching Protocols; the proxy does not switch protocols (WebSocket, h2c).`,
  );
}

function unreachable(url: URL, error: NodeJS.ErrnoException, headersTimeoutMs: number): HttpError {
  if (error instanceof HttpError) return error;
  if (error.code === 'UND_ERR_HEADERS_TIMEOUT') {
    return new HttpError(502, `The destination ${url.origin} did not answer within ${headersTimeoutMs / 1000} s.`, {
      title: 'Destination unreachable',
      cause: error,
    });
  }
  // Ours for a bare 101; undici's words for a 101 with Upgrade headers to a request that asked for none.
  if (error instanceof SwitchedProtocols || error.message === 'bad upgrade') return switchingProtocols(url);
  const reason =
    error.code === 'ECONNREFUSED'
      ? 'connection refused'
      : error.code === 'ENOTFOUND'
        ? 'host not found'
        : (error.code ?? error.message);
  return new HttpError(502, `The destination ${url.origin} could not be reached: ${reason}.`, {
    title: 'Destination unreachable',
    cause: error,
  });
}
