/**
 * The one home of storage quotas: a byte account per tenant (by kind of record, and in all) and one
 * for all tenants together, charged and released as the store's records come and go (the store's
 * collections call `charge` as changes are served, including deletes, expiry, rollback, a tenant's
 * deletion and a state reset, and as they are read at open), and the check of a write before it is
 * saved (`admit`). Counting is a number added: each record is weighed once, when it is written.
 */
import { PROBLEM_TYPES } from '../api/problem.js';
import {
  formatSize,
  QUOTA_REMEDY,
  QUOTA_STORAGE,
  type QuotaKind,
  type QuotaLimits,
  type RecordKind,
} from '../api/quotas.js';
import { HttpError } from './errors.js';

/** A tenant's bytes by kind, and their sum. */
interface Account {
  byKind: Map<RecordKind, number>;
  total: number;
}

/** What one write would add (or, below 0, free) by tenant and kind. */
export class Growth {
  readonly byTenant = new Map<string, Map<RecordKind, number>>();

  add(tenantId: string, kind: RecordKind, bytes: number): void {
    if (bytes === 0) return;
    let kinds = this.byTenant.get(tenantId);
    if (!kinds) this.byTenant.set(tenantId, (kinds = new Map()));
    kinds.set(kind, (kinds.get(kind) ?? 0) + bytes);
  }

  merge(other: Growth): void {
    for (const [tenantId, kinds] of other.byTenant) for (const [kind, bytes] of kinds) this.add(tenantId, kind, bytes);
  }
}

/** A tenant's use of each quota, as `/health` and the tenant's own route show it. */
export interface QuotaUse {
  used: number;
  quota: number;
}

export class Quotas {
  private readonly accounts = new Map<string, Account>();
  private all = 0;

  constructor(readonly limits: Readonly<QuotaLimits>) {}

  /** Bytes of every tenant's records. */
  get total(): number {
    return this.all;
  }

  /** Counts `bytes` (below 0: frees them) of a tenant's records of `kind`. */
  charge(tenantId: string, kind: RecordKind, bytes: number): void {
    if (bytes === 0) return;
    let account = this.accounts.get(tenantId);
    if (!account) this.accounts.set(tenantId, (account = { byKind: new Map(), total: 0 }));
    account.byKind.set(kind, (account.byKind.get(kind) ?? 0) + bytes);
    account.total += bytes;
    this.all += bytes;
    // A tenant with nothing kept keeps no account (svc/testing makes tenants by the thousand).
    if (account.total === 0) this.accounts.delete(tenantId);
  }

  /**
   * Refuses (507) a write whose growth would take a tenant's kind, the tenant or all tenants past
   * their quota, counting `pending` (writes accepted but not yet served) as kept. Only what grows
   * is checked: a write that adds nothing to a kind (a delete, an expiry, a rollback) is never
   * refused for it, whatever is used; a commit is refused only by the tokens it adds.
   */
  admit(growth: Growth, pending?: Growth): void {
    let allGrowth = 0;
    for (const [tenantId, kinds] of growth.byTenant) {
      const account = this.accounts.get(tenantId);
      const before = pending?.byTenant.get(tenantId);
      let tenantGrowth = 0;
      let tenantPending = 0;
      for (const [kind, bytes] of kinds) {
        tenantGrowth += bytes;
        const waiting = before?.get(kind) ?? 0;
        tenantPending += waiting;
        const used = (account?.byKind.get(kind) ?? 0) + waiting;
        if (bytes > 0 && used + bytes > this.limits[kind]) throw quotaFull(kind, used, this.limits[kind]);
      }
      for (const [kind, bytes] of before ?? []) if (!kinds.has(kind)) tenantPending += bytes;
      const used = (account?.total ?? 0) + tenantPending;
      if (tenantGrowth > 0 && used + tenantGrowth > this.limits.tenant)
        throw quotaFull('tenant', used, this.limits.tenant);
      allGrowth += tenantGrowth;
    }
    const used = this.all + sumOf(pending);
    if (allGrowth > 0 && used + allGrowth > this.limits.total) throw quotaFull('total', used, this.limits.total);
  }

  /** A tenant's use of each of its quotas, and of the total of all tenants. */
  usage(tenantId: string): Record<QuotaKind, QuotaUse> {
    const account = this.accounts.get(tenantId);
    const use = (kind: QuotaKind, used: number): QuotaUse => ({ used, quota: this.limits[kind] });
    return {
      tokens: use('tokens', account?.byKind.get('tokens') ?? 0),
      results: use('results', account?.byKind.get('results') ?? 0),
      transactions: use('transactions', account?.byKind.get('transactions') ?? 0),
      resources: use('resources', account?.byKind.get('resources') ?? 0),
      tenant: use('tenant', account?.total ?? 0),
      total: use('total', this.all),
    };
  }
}

function sumOf(growth: Growth | undefined): number {
  let sum = 0;
  for (const kinds of growth?.byTenant.values() ?? []) for (const bytes of kinds.values()) sum += bytes;
  return sum;
}

/**
 * The 507 of a full quota: which storage, how full, the quota's name and how to change it.
 * `The tenant's token storage is full: 1 MB of 1 MB (quota tokens). Delete tokens or raise it with
 * svc serve --quota tokens=2MB (createEmulator: quotas.tokens).`
 */
export function quotaFull(kind: QuotaKind, used: number, quota: number): HttpError {
  const raised = formatSize(quota * 2).replace(' ', '');
  return new HttpError(
    507,
    `${QUOTA_STORAGE[kind]} is full: ${formatSize(used)} of ${formatSize(quota)} (quota ${kind}). ` +
      `${QUOTA_REMEDY[kind]}, or raise it with svc serve --quota ${kind}=${raised} (createEmulator: quotas.${kind}).`,
    { type: PROBLEM_TYPES.quotaExceeded },
  );
}

/** Whether an error is a full quota's refusal. */
export function isQuotaFull(error: unknown): error is HttpError {
  return error instanceof HttpError && error.type === PROBLEM_TYPES.quotaExceeded;
}
