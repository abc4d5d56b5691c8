import { unlink } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { DEFAULT_HOST, DEFAULT_PORT, MASTER_KEY_FILE } from '../api/defaults.js';
import { GIVEN_KEY_PATTERN } from '../api/patterns.js';
import { DEFAULT_TIER, TIERS, type Tier } from '../api/tiers.js';
import { EmulatorError, HttpError } from './errors.js';
import type { EmitEvent } from './events.js';
import { credentialsPath, writeCredentials } from './store/credentials.js';
import { DEFAULT_TIMEOUTS } from './http/connections.js';
import { buildServer } from './http/server.js';
import { ProxyPipeline } from './proxy/pipeline.js';
import type { Clock } from './services/applications.js';
import { createServices } from './services/index.js';
import type { BootstrapResult } from './services/tenants.js';
import { Cipher } from './crypto/cipher.js';
import { loadMasterKey } from './store/master-key.js';
import { holdsTokens, sealAtStart } from './services/lost-key.js';
import { DEFAULT_TRANSACTION_TTL_MS } from './services/transactions.js';
import type { WebhookOptions } from './services/webhooks.js';
import { DEFAULT_RESULT_RETENTION_MS, type ResultOptions } from './services/reactor-results.js';
import { Runtime, type RuntimeOptions } from './runtime/index.js';
import type { StoreFileSystem } from './store/io.js';
import { Store } from './store/store.js';

export type { Tier } from '../api/tiers.js';
/** How often expired Applications, tokens and transactions are swept out of the store. */
const SWEEP_INTERVAL_MS = 30_000;

export interface EmulatorOptions {
  /** Default 8790; 0 picks a free port. */
  port?: number;
  host?: string;
  /** The data file; default `.svc/data.json` (relative to the process's cwd). */
  data?: string;
  inMemory?: boolean;
  /** Keys the bootstrap Applications must use (else generated on first start). */
  managementKey?: string;
  privateKey?: string;
  tier?: Tier;
  /** How long a transaction stays open (default 1 h). */
  transactionTtlMs?: number;
  /** Base64 of the 32-byte key that encrypts token data (default: `master.key` beside the data file). */
  masterKey?: string;
  /** The sandbox: where npm packages resolve from, its processes and limits (see RuntimeOptions). */
  runtime?: Omit<RuntimeOptions, 'onLog'> & { prewarm?: boolean };
  /** The synchronous reactor timeout (30 s, as on the platform). */
  syncTimeoutMs?: number;
  /** Webhook delivery: attempts, backoff, per-attempt timeout. */
  webhooks?: WebhookOptions;
  /** Asynchronous results: kept `retentionMs` after their delivery ends (24 h), at most `maxPerTenant` (10,000). */
  results?: ResultOptions;
  /** A client must send a whole request (headers and body) within this; else 408 (default 30 s). */
  requestTimeoutMs?: number;
  /** ... and its headers within this (default 10 s). */
  headersTimeoutMs?: number;
  /** On dispose, requests in flight (proxied and reactor calls included) get this long to finish (default 10 s). */
  shutdownGraceMs?: number;
  debug?: boolean;
  /** The hot routes on the lean path in front of fastify (default true); tests compare the two. */
  leanRoutes?: boolean;
  onEvent?: EmitEvent;
  /** The file operations of the store's writes (default node:fs); tests inject disk failures here. */
  fileSystem?: StoreFileSystem;
  clock?: Clock;
}

export interface Emulator {
  /** `http://host:port`, known once `ready` has resolved. */
  readonly url: string;
  readonly ready: Promise<void>;
  /** What the first start created (keys to show once), known once ready. */
  readonly bootstrap: BootstrapResult;
  /** Where the CLI finds the URL and keys; undefined in memory. */
  readonly credentialsFile: string | undefined;
  readonly tier: Tier;
  /** The bootstrap tenant's webhook signing secret (SVC-SIGNATURE), known once ready. */
  readonly webhookSecret: string;
  /** Stops listening, flushes the store and releases it; safe to call more than once. */
  dispose(): Promise<void>;
}

export { EmulatorError } from './errors.js';
export type { EmulatorEvent, EmitEvent } from './events.js';

/** Starts the emulator: opens the store, bootstraps the first tenant, listens. */
export function createEmulator(options: EmulatorOptions = {}): Emulator {
  const emit = options.onEvent ?? (() => {});
  const tier = options.tier ?? DEFAULT_TIER;
  let url: string | undefined;
  let bootstrap: BootstrapResult | undefined;
  let credentialsFile: string | undefined;
  let webhookSecret: string | undefined;
  let disposed = false;
  let stop: (() => Promise<void>) | undefined;

  const start = async () => {
    checkOptions(options);
    const store = await Store.open({
      ...(options.data !== undefined && { path: options.data }),
      inMemory: options.inMemory ?? false,
      ...(options.fileSystem && { fileSystem: options.fileSystem }),
      report: (message) => emit({ type: 'error', message }),
    });
    stop = () => store.close();
    for (const problem of store.problems) emit({ type: 'warning', message: problem });
    const { key, created } = await loadMasterKey(store.dir, options.masterKey);
    if (created && holdsTokens(store)) {
      // The key just made cannot read these tokens: remove it, so the next start asks again.
      if (store.dir !== undefined) await unlink(path.join(store.dir, MASTER_KEY_FILE)).catch(() => {});
      throw new EmulatorError(
        `The store holds tokens but its master key (${path.join(store.dir ?? '', MASTER_KEY_FILE)}) is missing: the tokens cannot be read without it. ` +
          'Restore master.key from a backup, or pass it as options.masterKey; to start over without the tokens, move the data folder aside.',
      );
    }
    const cipher = new Cipher(key);
    // User code's console lines are reported under the name of what they belong to.
    let nameOf = (id: string): string | undefined => id;
    const runtime = new Runtime({
      ...options.runtime,
      onLog: (entry) => emit({ type: 'console', source: nameOf(entry.instance) ?? entry.instance, level: entry.level, text: entry.text, requestId: entry.requestId }),
    });
    stop = async () => {
      await runtime.dispose();
      await store.close();
    };
    const services = createServices(store, {
      cipher,
      runtime,
      emit,
      tier,
      transactionTtlMs: options.transactionTtlMs ?? DEFAULT_TRANSACTION_TTL_MS,
      ...(options.syncTimeoutMs !== undefined && { syncTimeoutMs: options.syncTimeoutMs }),
      ...(options.webhooks && { webhooks: options.webhooks }),
      ...(options.results && { results: options.results }),
      ...(options.clock && { clock: options.clock }),
    });
    nameOf = (id) => services.reactors.nameOf(id) ?? services.proxies.nameOf(id);
    let resealed: string[];
    try {
      // Before anything is served: plaintext configuration sealed, and what a lost key sealed made anew.
      resealed = await sealAtStart(store, services, cipher, created);
    } catch (error) {
      // Nothing of it was saved: without the key just made, the next start makes it all anew again.
      if (created && store.dir !== undefined) await unlink(path.join(store.dir, MASTER_KEY_FILE)).catch(() => {});
      throw error;
    }
    for (const message of resealed) emit({ type: 'warning', message });
    for (const message of await services.tenants.recoverMissing()) emit({ type: 'warning', message });
    if (options.runtime?.prewarm) runtime.prewarm();
    // Runs cut off by the last stop end failed; deliveries pending then resume.
    await services.results.recover();
    const pipeline = new ProxyPipeline({ proxies: services.proxies, applications: services.applications, tokens: services.tokens, tier, emit });
    const server = buildServer({
      services,
      pipeline,
      emit,
      debug: options.debug ?? false,
      lean: options.leanRoutes ?? true,
      timeouts: {
        ...(options.requestTimeoutMs !== undefined && { requestTimeoutMs: options.requestTimeoutMs }),
        ...(options.headersTimeoutMs !== undefined && { headersTimeoutMs: options.headersTimeoutMs }),
        ...(options.shutdownGraceMs !== undefined && { shutdownGraceMs: options.shutdownGraceMs }),
      },
    });
    const sweep = async () => {
      try {
        const removed = await services.sweep();
        if (removed.applications + removed.tokens + removed.transactions + removed.results > 0) emit({ type: 'expired', ...removed });
      } catch (error) {
        emit({ type: 'error', message: `sweeping expired records failed: ${(error as Error).message}`, stack: (error as Error).stack });
      }
    };
    // A retention shorter than the interval (tests use one) is swept as often as it asks.
    const sweeper = setInterval(() => void sweep(), Math.max(100, Math.min(SWEEP_INTERVAL_MS, options.results?.retentionMs ?? DEFAULT_RESULT_RETENTION_MS)));
    sweeper.unref();
    stop = async () => {
      clearInterval(sweeper);
      const deadline = Date.now() + (options.shutdownGraceMs ?? DEFAULT_TIMEOUTS.shutdownGraceMs);
      // Requests in flight finish first: the runtime and the proxy pool they use stay up meanwhile.
      await server.closeGracefully();
      // Then asynchronous invocations under way get what is left of the grace to store their
      // results (webhooks stop retrying: a delivery left pending resumes on the next start).
      await services.dispose();
      await pipeline.close();
      await within(services.reactors.settle(), deadline - Date.now());
      await runtime.dispose();
      await services.reactors.settle();
      await store.close();
    };
    await sweep();
    bootstrap = await services.tenants.bootstrap({
      ...(options.managementKey !== undefined && { managementKey: options.managementKey }),
      ...(options.privateKey !== undefined && { privateKey: options.privateKey }),
    });
    webhookSecret = await services.webhooks.secret(bootstrap.tenantId);
    if (disposed) return;
    const host = options.host ?? DEFAULT_HOST;
    await listen(server, options.port ?? DEFAULT_PORT, host);
    url = formatUrl(host, (server.server.address() as AddressInfo).port);
    if (store.dir !== undefined) {
      credentialsFile = credentialsPath(store.dir);
      await writeCredentials(credentialsFile, {
        url,
        tenant_id: bootstrap.tenantId,
        management_key: bootstrap.keys.managementKey,
        private_key: bootstrap.keys.privateKey,
      });
    }
  };
  // A failed start releases what it opened (the store's lock above all) and is reported through
  // `ready`; disposing after it is still safe.
  const ready = start().catch(async (error: unknown) => {
    await stop?.().catch(() => {});
    stop = undefined;
    throw startFailure(error);
  });
  ready.catch(() => {});

  return {
    get url() {
      if (url === undefined) throw new Error('the emulator is not listening yet: await ready first');
      return url;
    },
    ready,
    get bootstrap() {
      if (bootstrap === undefined) throw new Error('the emulator has not started yet: await ready first');
      return bootstrap;
    },
    get credentialsFile() {
      return credentialsFile;
    },
    get webhookSecret() {
      if (webhookSecret === undefined) throw new Error('the emulator has not started yet: await ready first');
      return webhookSecret;
    },
    tier,
    async dispose() {
      if (disposed) return;
      disposed = true;
      await ready.catch(() => {});
      await stop?.();
    },
  };
}

function checkOptions(options: EmulatorOptions): void {
  const refuse = (option: string, reason: string) => new EmulatorError(`options.${option} ${reason}`, { option });
  for (const [option, key] of [['managementKey', options.managementKey], ['privateKey', options.privateKey]] as const) {
    if (key !== undefined && !GIVEN_KEY_PATTERN.test(key)) {
      throw refuse(option, 'must be 16 to 256 characters of letters, digits, "_", "-" or ".".');
    }
  }
  if (options.managementKey !== undefined && options.managementKey === options.privateKey) {
    throw refuse('privateKey', 'must differ from options.managementKey.');
  }
  const port = options.port ?? DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw refuse('port', `must be a whole number from 0 to 65535, not ${port}.`);
  }
  for (const [name, value] of [['requestTimeoutMs', options.requestTimeoutMs], ['headersTimeoutMs', options.headersTimeoutMs], ['shutdownGraceMs', options.shutdownGraceMs]] as const) {
    if (value !== undefined && (!Number.isInteger(value) || value < 1)) throw refuse(name, 'must be a whole number of milliseconds, at least 1.');
  }
  const ttl = options.transactionTtlMs;
  if (ttl !== undefined && (!Number.isInteger(ttl) || ttl < 1000)) {
    throw refuse('transactionTtlMs', `must be at least 1000 (1 s), not ${ttl}.`);
  }
  for (const [name, value] of [['results.retentionMs', options.results?.retentionMs], ['results.maxPerTenant', options.results?.maxPerTenant]] as const) {
    if (value !== undefined && (!Number.isInteger(value) || value < 1)) throw refuse(name, `must be a whole number above 0, not ${value}.`);
  }
  if (options.tier !== undefined && !TIERS.includes(options.tier)) {
    throw refuse('tier', `must be one of ${TIERS.join(', ')}.`);
  }
}

async function listen(server: ReturnType<typeof buildServer>, port: number, host: string): Promise<void> {
  try {
    await server.listen({ port, host });
  } catch (error) {
    await server.close().catch(() => {});
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      throw new EmulatorError(`Port ${port} on ${host} is already in use (another svc serve?). Stop it, or choose another options.port (0 picks a free one).`, {
        option: 'port',
        cause: error,
      });
    }
    if (code === 'EACCES') throw new EmulatorError(`Not allowed to listen on ${host}:${port}; pick another options.port, above 1023.`, { option: 'port', cause: error });
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
      throw new EmulatorError(`Cannot listen on options.host ${host}: no such local address.`, { option: 'host', cause: error });
    }
    throw error;
  }
}

/**
 * What a failed start reports: an EmulatorError as it is; anything else (a problem a service
 * raised while bootstrapping, a failure of the disk or the sandbox) wrapped in one that says what
 * failed, so that no caller takes it for a bug of its own. The original stays as `cause`.
 */
function startFailure(error: unknown): EmulatorError {
  if (error instanceof EmulatorError) return error;
  const reason = error instanceof HttpError ? error.detail : error instanceof Error ? error.message : String(error);
  return new EmulatorError(`The emulator could not start: ${reason}`, { cause: error });
}

/** Waits for `task`, or `ms` at most. */
async function within(task: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([task, new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, ms))))]);
  clearTimeout(timer);
}

function formatUrl(host: string, port: number): string {
  const shown = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}
