/**
 * The calls `svc replay` can re-run, in memory: the last CALLS_PER_TENANT per tenant, the oldest
 * dropped first; at most REPLAY_TENANTS tenants, the one heard of least recently dropped (a
 * lib/bounded-store.ts, as the explanation store is). Count alone does not bound memory (a call keeps
 * up to 64 KB of each body it passed), so each call is weighed by the characters it keeps: a tenant
 * holds at most TENANT_WEIGHT_LIMIT, all tenants together at most REPLAY_WEIGHT_LIMIT.
 */
import { BoundedStore } from '../../lib/bounded-store.js';
import type { KeptCall } from './types.js';

export const CALLS_PER_TENANT = 100;
export const REPLAY_TENANTS = 256;
/** About 64 MB of text for all tenants, 8 MB for one. */
export const REPLAY_WEIGHT_LIMIT = 64 * 1024 * 1024;
export const TENANT_WEIGHT_LIMIT = 8 * 1024 * 1024;

export interface ReplayBounds {
  perTenant: number;
  tenants: number;
  weight: number;
  tenantWeight: number;
}

export class CallStore {
  private readonly calls: BoundedStore<KeptCall>;

  constructor(
    readonly bounds: ReplayBounds = {
      perTenant: CALLS_PER_TENANT,
      tenants: REPLAY_TENANTS,
      weight: REPLAY_WEIGHT_LIMIT,
      tenantWeight: TENANT_WEIGHT_LIMIT,
    },
  ) {
    this.calls = new BoundedStore({
      perOwner: bounds.perTenant,
      owners: bounds.tenants,
      weight: bounds.weight,
      ownerWeight: bounds.tenantWeight,
    });
  }

  /** The weight of every kept call. */
  get weight(): number {
    return this.calls.weight;
  }

  /** Keeps a call (weighed by its JSON text's length); the newest is always kept, whatever it weighs. */
  add(call: KeptCall): void {
    this.calls.set(call.tenantId, call.traceId, call, JSON.stringify(call).length);
  }

  get(tenantId: string, traceId: string): KeptCall | undefined {
    return this.calls.get(tenantId, traceId);
  }

  /** How many calls a tenant has kept. */
  count(tenantId: string): number {
    return this.calls.count(tenantId);
  }

  /** A deleted tenant's calls go with it. */
  forget(tenantId: string): void {
    this.calls.forget(tenantId);
  }
}
