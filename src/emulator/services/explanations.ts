/**
 * The decisions of past requests by trace id (GET /_emulator/explanations/{trace_id}): each
 * refusal explained (a 401, 403 or detokenization 400 of a known tenant), the last
 * EXPLANATIONS_PER_TENANT per tenant, the oldest dropped first; at most EXPLAINED_TENANTS tenants,
 * the one heard of least recently dropped (svc/testing makes tenants by the thousand).
 *
 * Count alone does not bound memory: an explanation lists every rule of its Application (up to 100,
 * each up to a kilobyte) and every expression (up to 100). So each is weighed (1, plus its rules and
 * expressions): a tenant holds at most a tenth of EXPLANATION_WEIGHT_LIMIT, all tenants together at
 * most the limit (about 1 KB a unit at worst), the oldest dropped first.
 */
import type { Explanation, StoredExplanation } from '../../api/explanation.js';

export const EXPLANATIONS_PER_TENANT = 1000;
export const EXPLAINED_TENANTS = 256;
export const EXPLANATION_WEIGHT_LIMIT = 100_000;
const TENANT_WEIGHT_LIMIT = EXPLANATION_WEIGHT_LIMIT / 10;

interface Kept {
  entries: Map<string, StoredExplanation>;
  weight: number;
}

function weightOf(explanation: Explanation): number {
  return 1 + (explanation.rules?.length ?? 0) + (explanation.expressions?.length ?? 0);
}

export class ExplanationStore {
  private readonly tenants = new Map<string, Kept>();
  /** The weight of all kept explanations. */
  weight = 0;

  constructor(private readonly now: () => Date = () => new Date()) {}

  record(
    tenantId: string,
    request: { traceId: string; method: string; path: string; status: number },
    explanation: Explanation,
  ): void {
    let kept = this.tenants.get(tenantId);
    if (kept) this.tenants.delete(tenantId);
    else kept = { entries: new Map(), weight: 0 };
    this.tenants.set(tenantId, kept);
    if (this.tenants.size > EXPLAINED_TENANTS) this.forget(this.tenants.keys().next().value!);
    // A trace id sent again names the latest request that used it.
    this.drop(kept, request.traceId);
    kept.entries.set(request.traceId, {
      trace_id: request.traceId,
      method: request.method,
      path: request.path,
      status: request.status,
      time: this.now().toISOString(),
      explanation,
    });
    const weight = weightOf(explanation);
    kept.weight += weight;
    this.weight += weight;
    // The newest is always kept, whatever it weighs (at most 201).
    while (kept.entries.size > 1 && (kept.entries.size > EXPLANATIONS_PER_TENANT || kept.weight > TENANT_WEIGHT_LIMIT))
      this.drop(kept, kept.entries.keys().next().value!);
    // Over the whole limit: the tenants heard of least recently lose theirs first.
    for (const [id, other] of this.tenants) {
      if (this.weight <= EXPLANATION_WEIGHT_LIMIT || other === kept) break;
      this.forget(id);
    }
  }

  get(tenantId: string, traceId: string): StoredExplanation | undefined {
    return this.tenants.get(tenantId)?.entries.get(traceId);
  }

  /** A deleted tenant's decisions go with it. */
  forget(tenantId: string): void {
    const kept = this.tenants.get(tenantId);
    if (!kept) return;
    this.weight -= kept.weight;
    this.tenants.delete(tenantId);
  }

  private drop(kept: Kept, traceId: string): void {
    const stored = kept.entries.get(traceId);
    if (!stored) return;
    const weight = weightOf(stored.explanation);
    kept.entries.delete(traceId);
    kept.weight -= weight;
    this.weight -= weight;
  }
}
