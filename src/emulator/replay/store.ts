/**
 * The calls `svc replay` can re-run, in memory: the last CALLS_PER_TENANT per tenant, the oldest
 * dropped first; at most REPLAY_TENANTS tenants, the one heard of least recently dropped (as the
 * explanation store, services/explanations.ts). Count alone does not bound memory (a call keeps up
 * to 64 KB of each body it passed), so each call is weighed by the characters it keeps: a tenant
 * holds at most TENANT_WEIGHT_LIMIT, all tenants together at most REPLAY_WEIGHT_LIMIT.
 */
import type { KeptCall } from './types.js';

export const CALLS_PER_TENANT = 100;
export const REPLAY_TENANTS = 256;
/** About 64 MB of text for all tenants, 8 MB for one. */
export const REPLAY_WEIGHT_LIMIT = 64 * 1024 * 1024;
export const TENANT_WEIGHT_LIMIT = 8 * 1024 * 1024;

interface Kept {
  calls: Map<string, { call: KeptCall; weight: number }>;
  weight: number;
}

export interface ReplayBounds {
  perTenant: number;
  tenants: number;
  weight: number;
  tenantWeight: number;
}

export class CallStore {
  private readonly tenants = new Map<string, Kept>();
  /** The weight of every kept call. */
  weight = 0;

  constructor(
    readonly bounds: ReplayBounds = {
      perTenant: CALLS_PER_TENANT,
      tenants: REPLAY_TENANTS,
      weight: REPLAY_WEIGHT_LIMIT,
      tenantWeight: TENANT_WEIGHT_LIMIT,
    },
  ) {}

  /** Keeps a call (weighed by its JSON text's length); the newest is always kept, whatever it weighs. */
  add(call: KeptCall): void {
    const { bounds } = this;
    let kept = this.tenants.get(call.tenantId);
    if (kept) this.tenants.delete(call.tenantId);
    else kept = { calls: new Map(), weight: 0 };
    this.tenants.set(call.tenantId, kept);
    if (this.tenants.size > bounds.tenants) this.forget(this.tenants.keys().next().value!);
    this.drop(kept, call.traceId);
    const weight = JSON.stringify(call).length;
    kept.calls.set(call.traceId, { call, weight });
    kept.weight += weight;
    this.weight += weight;
    while (kept.calls.size > 1 && (kept.calls.size > bounds.perTenant || kept.weight > bounds.tenantWeight))
      this.drop(kept, kept.calls.keys().next().value!);
    for (const [id, other] of this.tenants) {
      if (this.weight <= bounds.weight || other === kept) break;
      this.forget(id);
    }
  }

  get(tenantId: string, traceId: string): KeptCall | undefined {
    return this.tenants.get(tenantId)?.calls.get(traceId)?.call;
  }

  /** How many calls a tenant has kept. */
  count(tenantId: string): number {
    return this.tenants.get(tenantId)?.calls.size ?? 0;
  }

  /** A deleted tenant's calls go with it. */
  forget(tenantId: string): void {
    const kept = this.tenants.get(tenantId);
    if (!kept) return;
    this.weight -= kept.weight;
    this.tenants.delete(tenantId);
  }

  private drop(kept: Kept, traceId: string): void {
    const stored = kept.calls.get(traceId);
    if (!stored) return;
    kept.calls.delete(traceId);
    kept.weight -= stored.weight;
    this.weight -= stored.weight;
  }
}
