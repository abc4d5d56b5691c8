/**
 * The decisions of past requests by trace id (GET /_emulator/explanations/{trace_id}): each
 * refusal explained (a 401, 403 or detokenization 400 of a known tenant), the last
 * EXPLANATIONS_PER_TENANT per tenant, the oldest dropped first; at most EXPLAINED_TENANTS tenants,
 * the one heard of least recently dropped (svc/testing makes tenants by the thousand).
 *
 * Count alone does not bound memory: an explanation lists every rule of its Application (up to 100,
 * each up to a kilobyte) and every expression (up to 100). So each is weighed (1, plus its rules and
 * expressions): a tenant holds at most a tenth of EXPLANATION_WEIGHT_LIMIT, all tenants together at
 * most the limit (about 1 KB a unit at worst), the oldest dropped first (lib/bounded-store.ts).
 */
import type { Explanation, StoredExplanation } from '../../api/explanation.js';
import { BoundedStore } from '../../lib/bounded-store.js';

export const EXPLANATIONS_PER_TENANT = 1000;
export const EXPLAINED_TENANTS = 256;
export const EXPLANATION_WEIGHT_LIMIT = 100_000;
const TENANT_WEIGHT_LIMIT = EXPLANATION_WEIGHT_LIMIT / 10;

function weightOf(explanation: Explanation): number {
  return 1 + (explanation.rules?.length ?? 0) + (explanation.expressions?.length ?? 0);
}

export class ExplanationStore {
  private readonly decisions = new BoundedStore<StoredExplanation>({
    perOwner: EXPLANATIONS_PER_TENANT,
    owners: EXPLAINED_TENANTS,
    weight: EXPLANATION_WEIGHT_LIMIT,
    ownerWeight: TENANT_WEIGHT_LIMIT,
  });

  constructor(private readonly now: () => Date = () => new Date()) {}

  /** The weight of all kept explanations. */
  get weight(): number {
    return this.decisions.weight;
  }

  /** Keeps a decision; a trace id sent again names the latest request that used it. */
  record(
    tenantId: string,
    request: { traceId: string; method: string; path: string; status: number },
    explanation: Explanation,
  ): void {
    const stored: StoredExplanation = {
      trace_id: request.traceId,
      method: request.method,
      path: request.path,
      status: request.status,
      time: this.now().toISOString(),
      explanation,
    };
    // The newest is always kept, whatever it weighs (at most 201).
    this.decisions.set(tenantId, request.traceId, stored, weightOf(explanation));
  }

  get(tenantId: string, traceId: string): StoredExplanation | undefined {
    return this.decisions.get(tenantId, traceId);
  }

  /** A deleted tenant's decisions go with it. */
  forget(tenantId: string): void {
    this.decisions.forget(tenantId);
  }
}
