import { createHash } from 'node:crypto';
import https from 'node:https';
import tls from 'node:tls';
import { MATERIAL_OPTIONS, TlsParser, tlsError } from './tls-parser.js';
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
 * TLS_BURST_BYTES at once, then TLS_BYTES_PER_SECOND. Material with a key is parsed first in a
 * process of its own, within a time budget (tls-parser.ts: an encrypted key's PBKDF2 count is work
 * no byte count bounds); the context is made on the emulator's thread, with the key decrypted (a
 * 500 KB `ca` of 780 certificates holds it 110 ms): a pool that gave new material with every
 * request would hold it for every tenant. A context once made is kept, so a pool that reuses its options parses
 * them once.
 */
export const TLS_BURST_BYTES = 1024 * 1024;
export const TLS_BYTES_PER_SECOND = 256 * 1024;
/** What a parse that ran out of time costs its pool's budget: 8 s of it (the parse held a core 2 s). */
const TLS_TIMEOUT_COST_BYTES = 2 * 1024 * 1024;

/** What makes a TLS context: the options a context is made of (servername and the rest are the connection's). */
const CONTEXT_OPTIONS = MATERIAL_OPTIONS;

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
  private readonly parser = new TlsParser();

  constructor(
    private readonly bytesPerSecond = TLS_BYTES_PER_SECOND,
    private readonly idleSocketMs = IDLE_SOCKET_MS,
  ) {}

  /**
   * The agent and (for options that make one) the TLS context of a request of `pool`. Rejects
   * with code ERR_SVC_TLS_BUDGET when parsing the material would be over the pool's budget,
   * ERR_SVC_TLS_BUSY when the pool has as many keys being parsed as it may, ERR_SVC_TLS_TIMEOUT
   * when its parse ran out of time, Node's code when it is not valid, and
   * ERR_SVC_TLS_REFUSED when the same material failed before.
   */
  async optionsOf(
    name: string,
    options: OutboundTls,
  ): Promise<{ agent: https.Agent; secureContext?: tls.SecureContext }> {
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
    else secureContext = await this.made(name, pool, key, options);
    if (this.pools.get(name) !== pool)
      throw tlsError('ERR_SVC_NO_NETWORK', 'The request was not sent: its code was unloaded.');
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
    this.parser.close();
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

  /**
   * A context of new material, paid for. Material with a `key` is parsed first in the parse process
   * (an encrypted key's PBKDF2 count is the key's to choose, and a key with no passphrase may be
   * encrypted too); the context is then made here with the key decrypted. A `ca` or `cert` alone is
   * parsed here: its work grows with its bytes, which the budget counts.
   */
  private async made(name: string, pool: Pool, key: string, options: OutboundTls): Promise<tls.SecureContext> {
    const refused = this.parser.refusal(name, key);
    if (refused) throw refused;
    // The same material already being parsed (concurrent requests of one pool): paid for once.
    if (!this.parser.parsing(name, key)) {
      if (options.key !== undefined) this.parser.admit(name);
      this.pay(pool, options);
    }
    const { ca, cert, passphrase, ciphers, minVersion, maxVersion } = options;
    let decrypted: string | undefined;
    if (options.key !== undefined) {
      const material = { ca, cert, key: options.key, passphrase, ciphers, minVersion, maxVersion };
      try {
        decrypted = await this.parser.parse(name, key, material);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ERR_SVC_TLS_TIMEOUT') pool.budget -= TLS_TIMEOUT_COST_BYTES;
        throw error;
      }
    }
    try {
      // No passphrase: the key is the one the parse decrypted, nothing left to derive on this thread.
      return tls.createSecureContext({
        ...(ca !== undefined && { ca }),
        ...(cert !== undefined && { cert }),
        ...(decrypted !== undefined && { key: decrypted }),
        ...(ciphers !== undefined && { ciphers }),
        ...(minVersion !== undefined && { minVersion: minVersion as tls.SecureVersion }),
        ...(maxVersion !== undefined && { maxVersion: maxVersion as tls.SecureVersion }),
      });
    } catch (error) {
      this.parser.remember(name, key, error as Error);
      throw error;
    }
  }

  /** Takes the material's bytes off the pool's budget, or throws ERR_SVC_TLS_BUDGET. */
  private pay(pool: Pool, options: OutboundTls): void {
    const now = performance.now();
    pool.budget = Math.min(TLS_BURST_BYTES, pool.budget + ((now - pool.countedAt) / 1000) * this.bytesPerSecond);
    pool.countedAt = now;
    let bytes = 0;
    for (const option of CONTEXT_OPTIONS) bytes += options[option]?.length ?? 0;
    if (bytes > pool.budget) {
      throw tlsError(
        'ERR_SVC_TLS_BUDGET',
        'Too much new TLS material (ca, cert, key) for the emulator to parse now: a tenant may give ' +
          `${TLS_BYTES_PER_SECOND / 1024} KB of it a second; reuse the same options (their context is kept).`,
      );
    }
    pool.budget -= bytes;
  }
}
