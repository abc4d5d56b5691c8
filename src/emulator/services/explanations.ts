/**
 * The decisions of past requests by trace id (GET /_emulator/explanations/{trace_id}): each
 * refusal explained (a 401, 403 or detokenization 400 of a known tenant), the last
 * EXPLANATIONS_PER_TENANT per tenant, the oldest dropped first; at most EXPLAINED_TENANTS tenants,
 * the one heard of least recently dropped (svc/testing makes tenants by the thousand).
 */
import type { Explanation, StoredExplanation } from '../../api/explanation.js';

export const EXPLANATIONS_PER_TENANT = 1000;
export const EXPLAINED_TENANTS = 256;

export class ExplanationStore {
  private readonly tenants = new Map<string, Map<string, StoredExplanation>>();

  constructor(private readonly now: () => Date = () => new Date()) {}

  record(
    tenantId: string,
    request: { traceId: string; method: string; path: string; status: number },
    explanation: Explanation,
  ): void {
    let kept = this.tenants.get(tenantId);
    if (kept) this.tenants.delete(tenantId);
    else kept = new Map();
    this.tenants.set(tenantId, kept);
    if (this.tenants.size > EXPLAINED_TENANTS) this.tenants.delete(this.tenants.keys().next().value!);
    // A trace id sent again names the latest request that used it.
    kept.delete(request.traceId);
    kept.set(request.traceId, {
      trace_id: request.traceId,
      method: request.method,
      path: request.path,
      status: request.status,
      time: this.now().toISOString(),
      explanation,
    });
    if (kept.size > EXPLANATIONS_PER_TENANT) kept.delete(kept.keys().next().value!);
  }

  get(tenantId: string, traceId: string): StoredExplanation | undefined {
    return this.tenants.get(tenantId)?.get(traceId);
  }

  /** A deleted tenant's decisions go with it. */
  forget(tenantId: string): void {
    this.tenants.delete(tenantId);
  }
}
