import type { CreatedTenant } from '../api/types.js';
import { DEFAULT_TIER } from '../api/tiers.js';
import { Teardown } from '../lib/teardown.js';
import { EmulatorError, HttpError } from './errors.js';
import { EventHub, type EmulatorEvents } from './events.js';
import { checkTenantSpec } from './options.js';
import type { EmulatorOptions, TenantSpec } from './options.js';
import { OutboundGateway, type OutboundInterceptor } from './outbound/index.js';
import { leakGuarded } from './leaks/sinks.js';
import { CallReplays } from './replay/index.js';
import { type ForkedTenant, type TenantClock, type TenantService, tenantClock } from './services/tenants.js';
import { type EmulatorReady, start } from './start.js';

export type { Tier } from '../api/tiers.js';
export type { EmulatorOptions } from './options.js';
export type { EmulatorReady } from './start.js';

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
  // svc replay's calls, collected from the start: its interceptor is the first (a re-run's requests
  // are answered from what was kept before any mock or recorder sees them).
  const replays = CallReplays.on(gateway, events);
  const { leaks, emit } = leakGuarded(options, events.publish, gateway);

  // Started on the next microtask: whoever subscribes right after createEmulator() sees every event.
  // A failed start closes what it opened (the store's lock above all) and is reported through `ready`.
  const ready = Promise.resolve()
    .then(() =>
      start({
        options,
        tier,
        events,
        emit,
        teardown,
        gateway,
        replays,
        leaks,
        disposed: () => disposed,
        stoppingSince: () => stopping,
        madeServices: (services) => {
          tenantService = services.tenants;
          // A deleted tenant's keep-alive connections and kept calls go with it, whoever deleted it.
          services.tenants.onRemoved((tenantId) => {
            gateway.forgetTenant(tenantId);
            replays.store.forget(tenantId);
          });
        },
        listening: (at) => (url = at),
      }),
    )
    .catch(async (error: unknown) => {
      await teardown.run().catch(() => {});
      throw startFailure(error);
    });
  ready.catch(() => {});

  /** The tenants of a started emulator, or an EmulatorError once it is stopped (`refused`: what cannot be done). */
  const serving = async (refused: string): Promise<TenantService> => {
    await ready;
    if (disposed || !tenantService) throw new EmulatorError(`The emulator is stopped: ${refused}.`);
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
    tenants: libraryTenants(serving, () => tenantService),
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
 * `emulator.tenants`: what svc/testing is built on, over the started emulator's TenantService
 * (`serving` waits for the start, or refuses once stopped).
 */
function libraryTenants(
  serving: (refused: string) => Promise<TenantService>,
  current: () => TenantService | undefined,
): EmulatorTenants {
  return {
    async create(spec = {}) {
      checkTenantSpec(spec);
      const tenants = await serving('no tenant can be made');
      const { managementKey, privateKey } = spec;
      return tenants
        .create(spec.name ?? 'tenant', {
          ...(managementKey !== undefined && { managementKey }),
          ...(privateKey !== undefined && { privateKey }),
        })
        .catch(asLibraryError);
    },
    async fork(templateId, forkOptions = {}) {
      return (await serving('no tenant can be forked'))
        .fork(templateId, forkOptions.name ?? 'fork')
        .catch(asLibraryError);
    },
    async delete(tenantId) {
      return (await serving('no tenant can be deleted')).remove(tenantId).catch(asLibraryError);
    },
    async settled(tenantId) {
      return (await serving('no tenant can be waited for')).settled(tenantId);
    },
    async webhookSecret(tenantId) {
      return (await serving('no webhook secret can be read')).webhookSecret(tenantId).catch(asLibraryError);
    },
    clock: (tenantId) => tenantClock(tenantId, current, () => serving('no clock can be moved')),
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

/** A refusal of a service (a key already in use, no such tenant), said as the library says things. */
function asLibraryError(error: unknown): never {
  throw error instanceof HttpError ? new EmulatorError(error.detail, { cause: error }) : error;
}
