import { createHash } from 'node:crypto';
import https from 'node:https';
import tls from 'node:tls';
import type { OutboundTls } from './types.js';

/** Sockets a pool of user code's requests keeps per destination (what a sandbox process's agent had). */
const MAX_SOCKETS = 32;
/**
 * Sockets a pool of user code's requests holds in all, open or idle: each is a file descriptor of
 * the emulator, and every set of TLS options (a `servername`, a `ca`) is a destination of its own.
 */
const MAX_TOTAL_SOCKETS = 256;
/** How long a socket of user code's requests stays open unused (undici's keep-alive for a proxy's is 10 s). */
const IDLE_SOCKET_MS = 10_000;
/** The TLS contexts a pool keeps made (the most recently used). */
const KEPT_CONTEXTS = 8;
/**
 * The TLS material (a `ca` bundle, a certificate and key) a pool may have parsed anew: at most
 * TLS_BURST_BYTES at once, then TLS_BYTES_PER_SECOND. Parsing is done on the emulator's thread
 * (a 500 KB `ca` of 780 certificates holds it 110 ms): a pool that gave new material with every
 * request would hold it for every tenant. A context once made is kept, so a pool that reuses its
 * options parses them once.
 */
export const TLS_BURST_BYTES = 1024 * 1024;
export const TLS_BYTES_PER_SECOND = 256 * 1024;

/** What makes a TLS context: the options a context is made of (servername and the rest are the connection's). */
const CONTEXT_OPTIONS = ['ca', 'cert', 'key', 'passphrase', 'ciphers', 'minVersion', 'maxVersion'] as const;

interface Pool {
  agent: https.Agent;
  /** Contexts by the hash of their options, the most recently used last. */
  contexts: Map<string, tls.SecureContext>;
  /** Bytes of TLS material that may be parsed now, and when that was counted. */
  budget: number;
  countedAt: number;
}

/**
 * The connections of user code's requests, per pool (a tenant's): a keep-alive agent with its
 * bounds, and the TLS contexts its requests' options make, kept and paid for.
 */
export class UserConnections {
  private readonly pools = new Map<string, Pool>();

  constructor(
    private readonly bytesPerSecond = TLS_BYTES_PER_SECOND,
    private readonly idleSocketMs = IDLE_SOCKET_MS,
  ) {}

  /**
   * The agent and (for options that make one) the TLS context of a request of `pool`. Throws,
   * with code ERR_SVC_TLS_BUDGET, when making the context would be over the pool's budget.
   */
  optionsOf(name: string, options: OutboundTls): { agent: https.Agent; secureContext?: tls.SecureContext } {
    const pool = this.poolOf(name);
    const material = CONTEXT_OPTIONS.filter((option) => options[option] !== undefined);
    if (material.length === 0) return { agent: pool.agent };
    const hash = createHash('sha256');
    for (const option of CONTEXT_OPTIONS) {
      const value = options[option];
      hash.update(value === undefined ? `${option}-\u0000` : `${option}+${value}\u0000`);
    }
    const key = hash.digest('base64');
    let secureContext = pool.contexts.get(key);
    if (secureContext) pool.contexts.delete(key);
    else secureContext = this.made(pool, options);
    pool.contexts.set(key, secureContext);
    if (pool.contexts.size > KEPT_CONTEXTS) pool.contexts.delete(pool.contexts.keys().next().value!);
    return { agent: pool.agent, secureContext };
  }

  /** Ends a pool's connections and forgets its contexts (its tenant is gone). */
  forget(name: string): void {
    this.pools.get(name)?.agent.destroy();
    this.pools.delete(name);
  }

  close(): void {
    for (const pool of this.pools.values()) pool.agent.destroy();
    this.pools.clear();
  }

  private poolOf(name: string): Pool {
    let pool = this.pools.get(name);
    if (!pool) {
      const agent = new https.Agent({
        keepAlive: true,
        maxSockets: MAX_SOCKETS,
        maxTotalSockets: MAX_TOTAL_SOCKETS,
        timeout: this.idleSocketMs,
      });
      pool = { agent, contexts: new Map(), budget: TLS_BURST_BYTES, countedAt: performance.now() };
      this.pools.set(name, pool);
    }
    return pool;
  }

  private made(pool: Pool, options: OutboundTls): tls.SecureContext {
    const now = performance.now();
    pool.budget = Math.min(TLS_BURST_BYTES, pool.budget + ((now - pool.countedAt) / 1000) * this.bytesPerSecond);
    pool.countedAt = now;
    let bytes = 0;
    for (const option of CONTEXT_OPTIONS) bytes += options[option]?.length ?? 0;
    if (bytes > pool.budget) {
      const error = new Error(
        'Too much new TLS material (ca, cert, key) for the emulator to parse now: a tenant may give ' +
          `${TLS_BYTES_PER_SECOND / 1024} KB of it a second; reuse the same options (their context is kept).`,
      );
      throw Object.assign(error, { code: 'ERR_SVC_TLS_BUDGET' });
    }
    pool.budget -= bytes;
    const { ca, cert, key, passphrase, ciphers, minVersion, maxVersion } = options;
    return tls.createSecureContext({
      ...(ca !== undefined && { ca }),
      ...(cert !== undefined && { cert }),
      ...(key !== undefined && { key }),
      ...(passphrase !== undefined && { passphrase }),
      ...(ciphers !== undefined && { ciphers }),
      ...(minVersion !== undefined && { minVersion: minVersion as tls.SecureVersion }),
      ...(maxVersion !== undefined && { maxVersion: maxVersion as tls.SecureVersion }),
    });
  }
}
