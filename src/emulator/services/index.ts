import { DEFAULT_TIER, type Tier } from '../../api/tiers.js';
import type { EmitEvent } from '../events.js';
import type { Runtime } from '../runtime/index.js';
import type { Store } from '../store/store.js';
import { ApplicationService, type Clock } from './applications.js';
import type { Cipher } from '../crypto/cipher.js';
import { TenantService } from './tenants.js';
import { ProxyService } from './proxies.js';
import { ReactorResults, type ResultOptions } from './reactor-results.js';
import { ReactorService } from './reactors.js';
import { TokenService } from './tokens.js';
import { WebhookService, type WebhookOptions } from './webhooks.js';
import { DEFAULT_TRANSACTION_TTL_MS, TransactionService } from './transactions.js';

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
  /** Why the store cannot write now (the file, the cause, the fix), or undefined while it can: for /health. */
  storeProblem(): string | undefined;
  /**
   * Deletes expired Applications, tokens and reactor results, expires transactions and removes the
   * ended ones past their retention; returns what it removed or ended.
   */
  sweep(): Promise<{ applications: number; tokens: number; transactions: number; results: number }>;
  /** Stops timers and webhook deliveries. */
  dispose(): Promise<void>;
}

export function createServices(store: Store, options: ServiceOptions): Services {
  const clock = options.clock ?? (() => new Date());
  const applications = new ApplicationService(store, clock);
  const transactions = new TransactionService(
    store,
    options.tier ?? DEFAULT_TIER,
    options.transactionTtlMs ?? DEFAULT_TRANSACTION_TTL_MS,
    clock,
  );
  const tokens = new TokenService(store, options.cipher, transactions, clock, (message) =>
    options.emit({ type: 'error', message }),
  );
  const webhooks = new WebhookService(store, options.cipher, options.webhooks);
  const results = new ReactorResults(
    { store, cipher: options.cipher, webhooks, emit: options.emit, clock },
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
    clock,
    ...(options.syncTimeoutMs !== undefined && { syncTimeoutMs: options.syncTimeoutMs }),
  });
  const proxies = new ProxyService(store, options.runtime, options.cipher, clock);
  const tenants = new TenantService(store, applications, clock, {
    cipher: options.cipher,
    reactors,
    proxies,
    results,
    webhooks,
  });
  const sweep = async () => ({
    applications: await applications.sweep(),
    tokens: await tokens.sweep(),
    transactions: await transactions.sweep(),
    results: await results.sweep(),
  });
  return {
    applications,
    tenants,
    tokens,
    transactions,
    reactors,
    proxies,
    webhooks,
    results,
    storeProblem: () => store.writeProblem,
    sweep,
    dispose: async () => {
      applications.dispose();
      await webhooks.dispose();
    },
  };
}
