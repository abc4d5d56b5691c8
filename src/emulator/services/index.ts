import { DEFAULT_TIER, type Tier } from '../../api/tiers.js';
import type { EmitEvent } from '../events.js';
import type { Runtime } from '../runtime/index.js';
import type { Store } from '../store/store.js';
import { ApplicationService } from './applications.js';
import { ExplanationStore } from './explanations.js';
import type { Cipher } from '../crypto/cipher.js';
import { type Clock, TenantClocks } from './tenant-clocks.js';
import { TenantService } from './tenants.js';
import { ProxyService } from './proxies.js';
import { ReactorResults, type ResultOptions } from './reactor-results.js';
import { ReactorService } from './reactors.js';
import { TokenService } from './tokens.js';
import { StateService } from './state.js';
import { WebhookDeliveries } from './webhook-deliveries.js';
import { WebhookService, type WebhookOptions } from './webhooks.js';
import { DEFAULT_TRANSACTION_TTL_MS, TransactionService } from './transactions.js';
import type { LeakGuard } from '../leaks/guard.js';
import type { Quotas } from '../quotas.js';

export interface ServiceOptions {
  cipher: Cipher;
  runtime: Runtime;
  emit: EmitEvent;
  /** The synchronous reactor timeout; 30 s unless a test needs less. */
  syncTimeoutMs?: number;
  webhooks?: WebhookOptions;
  /** How long asynchronous results are kept, and how many per tenant. */
  results?: ResultOptions;
  tier?: Tier;
  transactionTtlMs?: number;
  clock?: Clock;
  /** The leak guard (emulator/leaks): calls that detokenize are watched by it. */
  leaks?: LeakGuard;
}

/**
 * Every domain service of the emulator, wired over one store. What sits above them (the proxy
 * pipeline, the HTTP server) is composed where the emulator is assembled (emulator/index.ts).
 */
export interface Services {
  applications: ApplicationService;
  tenants: TenantService;
  tokens: TokenService;
  transactions: TransactionService;
  reactors: ReactorService;
  proxies: ProxyService;
  webhooks: WebhookService;
  results: ReactorResults;
  /** The webhook deliveries of async invocations, listed and resent (`svc webhooks list|resend`). */
  deliveries: WebhookDeliveries;
  /** A tenant's state exported, imported and reset (`svc state`). */
  state: StateService;
  /** Each tenant's clock (svc/testing's `t.clock`): what every service reads the time from. */
  clocks: TenantClocks;
  /** The explained decisions of past requests by trace id (GET /_emulator/explanations/{trace_id}). */
  explanations: ExplanationStore;
  /** Why the store cannot write now (the file, the cause, the fix), or undefined while it can: for /health. */
  storeProblem(): string | undefined;
  /** The storage quotas: each tenant's use of them (GET /_emulator/quotas). */
  quotas: Quotas;
  /**
   * Deletes expired Applications, tokens and reactor results, expires transactions and removes the
   * ended ones past their retention; returns what it removed or ended.
   */
  sweep(): Promise<{ applications: number; tokens: number; transactions: number; results: number }>;
  /** `sweep`, what it removed reported as an `expired` event and a failure as an `error` one. */
  sweepExpired(): Promise<void>;
  /** Stops timers and webhook deliveries. */
  dispose(): Promise<void>;
}

export function createServices(store: Store, options: ServiceOptions): Services {
  const clocks = new TenantClocks(options.clock);
  const applications = new ApplicationService(store, clocks);
  const transactions = new TransactionService(
    store,
    options.tier ?? DEFAULT_TIER,
    options.transactionTtlMs ?? DEFAULT_TRANSACTION_TTL_MS,
    clocks,
  );
  const tokens = new TokenService(store, options.cipher, transactions, clocks, (message) =>
    options.emit({ type: 'error', message }),
  );
  if (options.leaks) tokens.leaks = options.leaks;
  const webhooks = new WebhookService(store, options.cipher, options.webhooks, clocks);
  const results = new ReactorResults(
    { store, cipher: options.cipher, webhooks, emit: options.emit, clocks },
    options.results,
  );
  const reactors = new ReactorService({
    store,
    cipher: options.cipher,
    runtime: options.runtime,
    tokens,
    results,
    tier: options.tier ?? DEFAULT_TIER,
    emit: options.emit,
    clocks,
    ...(options.syncTimeoutMs !== undefined && { syncTimeoutMs: options.syncTimeoutMs }),
  });
  const proxies = new ProxyService(store, options.runtime, options.cipher, clocks);
  const explanations = new ExplanationStore();
  const tenants = new TenantService(store, applications, clocks, {
    cipher: options.cipher,
    reactors,
    proxies,
    results,
    webhooks,
    explanations,
  });
  // A move of a tenant's clock waits for the tenant's work under way to end or wait for its time.
  clocks.running = (tenantId) => results.pending.count(tenantId);
  results.pending.onEnd = (tenantId) => clocks.changed(tenantId);
  const sweep = async () => ({
    applications: await applications.sweep(),
    tokens: await tokens.sweep(),
    transactions: await transactions.sweep(),
    results: await results.sweep(),
  });
  const sweepExpired = async () => {
    try {
      const removed = await sweep();
      if (removed.applications + removed.tokens + removed.transactions + removed.results > 0)
        options.emit({ type: 'expired', ...removed });
    } catch (error) {
      options.emit({
        type: 'error',
        message: `sweeping expired records failed: ${(error as Error).message}`,
        stack: (error as Error).stack,
      });
    }
  };
  // A tenant's clock moved: what expired by its time is swept at once.
  clocks.afterMove = sweepExpired;
  return {
    applications,
    tenants,
    tokens,
    transactions,
    reactors,
    proxies,
    webhooks,
    results,
    deliveries: new WebhookDeliveries({ store, results, webhooks, clocks, emit: options.emit }),
    state: new StateService({ store, cipher: options.cipher, runtime: options.runtime, clocks }),
    clocks,
    explanations,
    storeProblem: () => store.writeProblem,
    quotas: store.quotas,
    sweep,
    sweepExpired,
    dispose: async () => {
      applications.dispose();
      // Deliveries stop first, then their backoff waits end (a delivery woken so makes no attempt).
      const stopping = webhooks.dispose();
      clocks.close();
      await stopping;
    },
  };
}
