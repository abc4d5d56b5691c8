import { unlink } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_HOST, DEFAULT_PORT, MASTER_KEY_FILE } from '../api/defaults.js';
import { DEFAULT_TIER, type Tier } from '../api/tiers.js';
import { Teardown } from '../lib/teardown.js';
import { Cipher } from './crypto/cipher.js';
import { EmulatorError, HttpError } from './errors.js';
import { TenantEventLog } from './event-log.js';
import { EventHub, type EmulatorEvents } from './events.js';
import { DEFAULT_TIMEOUTS } from './http/connections.js';
import { listen } from './http/listen.js';
import { createHttpServer } from './http/front.js';
import { checkOptions, checkTenantSpec, type EmulatorOptions, type TenantSpec } from './options.js';
import { OutboundGateway, type OutboundInterceptor } from './outbound/index.js';
import { ProxyPipeline } from './proxy/pipeline.js';
import { Runtime } from './runtime/index.js';
import type { CodeOwner } from './services/applications.js';
import { createServices } from './services/index.js';
import { holdsTokens, sealAtStart } from './services/lost-key.js';
import { DEFAULT_RESULT_RETENTION_MS } from './services/reactor-results.js';
import {
  type BootstrapResult,
  type ForkedTenant,
  type TenantClock,
  type TenantService,
  tenantClock,
} from './services/tenants.js';
import type { CreatedTenant } from '../api/types.js';
import { DEFAULT_TRANSACTION_TTL_MS } from './services/transactions.js';
import { credentialsPath, readCredentials, writeCredentials } from './store/credentials.js';
import { loadMasterKey } from './store/master-key.js';
import { Store } from './store/store.js';

export type { Tier } from '../api/tiers.js';
export type { EmulatorOptions } from './options.js';
/** How often expired Applications, tokens and transactions are swept out of the store. */
const SWEEP_INTERVAL_MS = 30_000;

/** What a start brought up: `ready` resolves to it. */
export interface EmulatorReady {
  /** `http://host:port`. */
  url: string;
  /** What the start found or created: the tenant, and the keys it generated (to be shown once). */
  bootstrap: BootstrapResult;
  /** Where the CLI finds the URL and keys (0600); undefined in memory. */
  credentialsFile: string | undefined;
  tier: Tier;
  /** The bootstrap tenant's webhook signing secret (SVC-SIGNATURE). */
  webhookSecret: string;
}

/**
 * A running emulator. It has no `reload()`: what it serves changes through its own HTTP API (the
 * path `svc apply` and hot reload take, as against a remote server), never through a side door.
 */
export interface Emulator {
  /** `http://host:port` once listening, undefined before: the same as `(await ready).url`. */
  readonly url: string | undefined;
  /** Resolves once the emulator serves, to what started; rejects with an EmulatorError when it cannot start. */
  readonly ready: Promise<EmulatorReady>;
  /** The emulator's events (requests, runs of user code, console lines, webhooks, warnings), from the start. */
  readonly events: EmulatorEvents;
  /** Stops listening, lets requests in flight finish, flushes the store and releases it; safe to call more than once. */
  dispose(): Promise<void>;
  /** Tenants made in process, as the loopback admin route makes them (`POST /_emulator/tenants`). */
  readonly tenants: EmulatorTenants;
  /**
   * The one door out: every request a proxy forwards and every `https` request of user code. An
   * interceptor may answer in the network's place or observe (svc/testing's destination mocks);
   * internal-but-public: its types may change with the emulator's.
   */
  readonly outbound: EmulatorOutbound;
}

export interface EmulatorOutbound {
  /** Adds an interceptor after those already there (usable before `ready`); returns what removes it. */
  use(interceptor: OutboundInterceptor): () => void;
}

export interface EmulatorTenants {
  /**
   * A new tenant with its own management and private Applications, whose keys it answers (once,
   * as the route does). Waits for the start; rejects with an EmulatorError naming the field at fault.
   */
  create(spec?: TenantSpec): Promise<CreatedTenant>;
  /**
   * A new tenant copied from `templateId` in one write (svc/testing's `svc.tenant()`): its
   * Applications with keys of their own, its reactors and proxies (by name, with their new ids), none
   * of its tokens, results or events. Its code runs in the template's warm sandbox processes, each
   * version in a Compartment of its own (so with module state of its own).
   */
  fork(templateId: string, options?: { name?: string }): Promise<ForkedTenant>;
  /** Deletes a tenant and all it holds, its code unloaded at once; false when there is no such tenant. */
  delete(tenantId: string): Promise<boolean>;
  /** Resolves once the tenant's asynchronous invocations and webhook deliveries (retries too) have ended. */
  settled(tenantId: string): Promise<void>;
  /** The tenant's webhook signing secret (SVC-SIGNATURE). */
  webhookSecret(tenantId: string): Promise<string>;
  /** The tenant's clock (svc/testing's `t.clock`): real time until it is moved; no other tenant's moves. */
  clock(tenantId: string): TenantClock;
}

export { EmulatorError } from './errors.js';
export type { EmulatorEvent, EmulatorEvents, EventListener } from './events.js';
export type { BootstrapResult, ForkedTenant, TenantClock, TenantKeys } from './services/tenants.js';
export type { TenantSpec } from './options.js';
export { verifySignature } from './services/webhooks.js';
export type {
  OutboundInterceptor,
  OutboundNext,
  OutboundOrigin,
  OutboundRequest,
  OutboundResponse,
} from './outbound/index.js';

/**
 * Starts the emulator: opens the store, the sandbox and the services, bootstraps the first
 * tenant, listens. Every resource registers its close as it opens; dispose, or a start that fails
 * half-way, closes them in reverse.
 */
export function createEmulator(options: EmulatorOptions = {}): Emulator {
  const events = new EventHub();
  if (options.onEvent) events.subscribe(options.onEvent);
  const emit = events.publish;
  const tier = options.tier ?? DEFAULT_TIER;
  const teardown = new Teardown();
  /** When dispose began: the grace of requests in flight and of asynchronous runs counts from it. */
  let stopping = 0;
  let url: string | undefined;
  let disposed = false;
  /** The tenants of the store, once it is open (for `emulator.tenants`). */
  let tenantService: TenantService | undefined;
  // Every request a proxy forwards or user code makes leaves through it. Made before the start, so
  // that interceptors can attach at once; it opens connections only when a request goes out.
  const gateway = new OutboundGateway();

  const start = async (): Promise<EmulatorReady> => {
    checkOptions(options);
    const store = await Store.open({
      ...(options.data !== undefined && { path: options.data }),
      inMemory: options.inMemory ?? false,
      ...(options.fileSystem && { fileSystem: options.fileSystem }),
      report: (message) => emit({ type: 'error', message }),
    });
    teardown.push(() => store.close());
    for (const problem of store.problems) emit({ type: 'warning', message: problem });
    const { key, created, notice } = await loadMasterKey(store.dir, options.masterKey);
    if (notice !== undefined) emit({ type: 'warning', message: notice });
    // The key just made cannot read what a lost one sealed: it is removed if the start fails before
    // all that is made anew (see sealAtStart), so that the next start asks again.
    const forgetNewKey = async () => {
      if (created && store.dir !== undefined) await unlink(path.join(store.dir, MASTER_KEY_FILE)).catch(() => {});
    };
    if (created && holdsTokens(store)) {
      await forgetNewKey();
      throw new EmulatorError(
        (name) =>
          `The store holds tokens but its master key (${path.join(store.dir ?? '', MASTER_KEY_FILE)}) is missing: the tokens cannot be read without it. ` +
          `Restore master.key from a backup, or pass it as ${name('masterKey')}; to start over without the tokens, move the data folder aside.`,
        { option: 'masterKey' },
      );
    }
    const cipher = new Cipher(key);
    // User code's console lines are reported under the name and tenant of what they belong to.
    let ownerOf = (_id: string): CodeOwner | undefined => undefined;
    // Closed after the runtime.
    teardown.push(() => gateway.close());
    const runtime = new Runtime(
      {
        ...options.runtime,
        onLog: (entry) => {
          const owner = ownerOf(entry.instance);
          emit({
            type: 'console',
            source: owner?.name ?? entry.instance,
            tenantId: owner?.tenantId,
            level: entry.level,
            text: entry.text,
            requestId: entry.requestId,
          });
        },
      },
      {
        // The runtime names the code's sandbox group, which a fork shares with its template: the
        // request is named by the tenant that owns the code (svc/testing's mocks are per tenant).
        outbound: (request, origin) => {
          const owner = ownerOf(origin.id);
          return gateway.send(request, owner ? { ...origin, tenantId: owner.tenantId } : origin);
        },
      },
    );
    teardown.push(() => runtime.dispose());
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
    tenantService = services.tenants;
    events.clockOffset = (tenantId) => services.clocks.offset(tenantId);
    ownerOf = (id) => services.reactors.ownerOf(id) ?? services.proxies.ownerOf(id);
    teardown.push(async () => {
      // Asynchronous invocations under way get what is left of the grace to store their results
      // (webhooks stop retrying: a delivery left pending resumes on the next start); then the
      // sandbox stops, and the runs it cut off store how they ended before the store closes.
      await services.dispose();
      await within(services.reactors.settle(), stopping + graceMs(options) - Date.now());
      await runtime.dispose();
      await services.reactors.settle();
    });
    let resealed: string[];
    try {
      // Before anything is served: plaintext configuration sealed, and what a lost key sealed made anew.
      resealed = await sealAtStart(store, services, cipher, created);
    } catch (error) {
      // Nothing of it was saved: without the key just made, the next start makes it all anew again.
      await forgetNewKey();
      throw error;
    }
    for (const message of resealed) emit({ type: 'warning', message });
    for (const message of await services.tenants.recoverMissing()) emit({ type: 'warning', message });
    // Runs cut off by the last stop end failed; deliveries pending then resume.
    await services.results.recover();
    const pipeline = new ProxyPipeline({
      proxies: services.proxies,
      applications: services.applications,
      tokens: services.tokens,
      tier,
      emit,
      gateway,
    });
    let serving = false;
    const eventLog = new TenantEventLog(events);
    const server = createHttpServer({
      services,
      pipeline,
      emit,
      eventLog,
      serving: () => serving,
      debug: options.debug ?? false,
      timeouts: {
        ...(options.requestTimeoutMs !== undefined && { requestTimeoutMs: options.requestTimeoutMs }),
        ...(options.headersTimeoutMs !== undefined && { headersTimeoutMs: options.headersTimeoutMs }),
        ...(options.shutdownGraceMs !== undefined && { shutdownGraceMs: options.shutdownGraceMs }),
      },
    });
    const sweep = services.sweepExpired;
    // A retention shorter than the interval (tests use one) is swept as often as it asks.
    const sweeper = setInterval(
      () => void sweep(),
      Math.max(100, Math.min(SWEEP_INTERVAL_MS, options.results?.retentionMs ?? DEFAULT_RESULT_RETENTION_MS)),
    );
    sweeper.unref();
    teardown.push(() => clearInterval(sweeper));
    if (disposed) throw new EmulatorError('The emulator was disposed while it started.');
    // Listening comes before the bootstrap: a port in use fails the start before a tenant (whose
    // keys would be shown nowhere) is written. Requests meanwhile are answered 503.
    url = await listen(server, options.port ?? DEFAULT_PORT, options.host ?? DEFAULT_HOST);
    // Requests in flight finish first: the runtime and the proxy pool they use stay up meanwhile.
    teardown.push(() => server.closeGracefully());
    // Open event streams end first: the graceful stop waits for every answer under way.
    teardown.push(() => eventLog.close());
    await sweep();
    const bootstrap = await services.tenants.bootstrap({
      ...(options.managementKey !== undefined && { managementKey: options.managementKey }),
      ...(options.privateKey !== undefined && { privateKey: options.privateKey }),
    });
    const webhookSecret = await services.webhooks.secret(bootstrap.tenantId);
    // Served before the credentials file is written: whoever reads it (the CLI beside it) may call at once.
    serving = true;
    let credentialsFile: string | undefined;
    if (store.dir !== undefined) {
      credentialsFile = credentialsPath(store.dir);
      const saved = await readCredentials(credentialsFile);
      const known = [bootstrap.keys.managementKey, bootstrap.keys.privateKey, saved.management_key, saved.private_key];
      for (const { kind, id } of services.tenants.lostKeys(bootstrap.tenantId, known))
        emit({ type: 'warning', message: lostKeyWarning(kind, id, credentialsFile) });
      await writeCredentials(credentialsFile, {
        url,
        tenant_id: bootstrap.tenantId,
        management_key: bootstrap.keys.managementKey,
        private_key: bootstrap.keys.privateKey,
      });
    }
    // Booted once serving: its start would compete with the emulator's for the cores.
    if (options.runtime?.prewarm) runtime.prewarm();
    return { url, bootstrap, credentialsFile, tier, webhookSecret };
  };

  // Started on the next microtask: whoever subscribes right after createEmulator() sees every event.
  // A failed start closes what it opened (the store's lock above all) and is reported through `ready`.
  const ready = Promise.resolve()
    .then(start)
    .catch(async (error: unknown) => {
      await teardown.run().catch(() => {});
      throw startFailure(error);
    });
  ready.catch(() => {});

  /** The tenants of a started emulator, or an EmulatorError once it is stopped. */
  const serving = async (): Promise<TenantService> => {
    await ready;
    if (disposed || !tenantService) throw new EmulatorError('The emulator is stopped: no tenant can be made.');
    return tenantService;
  };

  let disposing: Promise<void> | undefined;
  return {
    get url() {
      return url;
    },
    ready,
    events,
    outbound: { use: (interceptor) => gateway.use(interceptor) },
    tenants: {
      async create(spec = {}) {
        checkTenantSpec(spec);
        await ready;
        if (disposed || !tenantService) throw new EmulatorError('The emulator is stopped: no tenant can be made.');
        const { managementKey, privateKey } = spec;
        return tenantService
          .create(spec.name ?? 'tenant', {
            ...(managementKey !== undefined && { managementKey }),
            ...(privateKey !== undefined && { privateKey }),
          })
          .catch(asLibraryError);
      },
      async fork(templateId, forkOptions = {}) {
        return (await serving()).fork(templateId, forkOptions.name ?? 'fork').catch(asLibraryError);
      },
      async delete(tenantId) {
        return (await serving()).remove(tenantId).catch(asLibraryError);
      },
      async settled(tenantId) {
        return (await serving()).settled(tenantId);
      },
      async webhookSecret(tenantId) {
        return (await serving()).webhookSecret(tenantId).catch(asLibraryError);
      },
      clock: (tenantId) => tenantClock(tenantId, () => tenantService, serving),
    },
    dispose() {
      disposing ??= (async () => {
        disposed = true;
        await ready.catch(() => {});
        stopping = Date.now();
        await teardown.run();
      })();
      return disposing;
    },
  };
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

/** What a start says of a starter Application whose key nobody has, and how to get a working one. */
function lostKeyWarning(kind: 'management' | 'private', id: string, credentialsFile: string): string {
  return (
    `The key of the bootstrap ${kind} Application (${id}) is in neither ${credentialsFile} nor the options given ` +
    '(an earlier start failed before saving it, or it was regenerated since): it cannot be shown again. To use that ' +
    `Application, start with options.${kind}Key set to a key of your choice (16 to 256 letters, digits, "_", "-" or "."): ` +
    'it replaces the lost one.'
  );
}

/** A refusal of a service (a key already in use, no such tenant), said as the library says things. */
function asLibraryError(error: unknown): never {
  throw error instanceof HttpError ? new EmulatorError(error.detail, { cause: error }) : error;
}

/** How long requests in flight, then asynchronous runs, get to finish once dispose begins. */
function graceMs(options: EmulatorOptions): number {
  return options.shutdownGraceMs ?? DEFAULT_TIMEOUTS.shutdownGraceMs;
}

/** Waits for `task`, or `ms` at most. */
async function within(task: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([task, new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, ms))))]);
  clearTimeout(timer);
}
