import { Growth, type Quotas } from '../quotas.js';
import { jsonWeight } from '../../lib/json-weight.js';
import type { ChangeSet, WriteBatch } from './batch.js';
import type { StagedOp, TokenRecord, TransactionRecord } from './records.js';

/**
 * The check of each write against the quotas, at its turn in the writer: what it adds by tenant
 * and kind (each record's weight against the one it replaces, as the write sees it), refused
 * (507) past a quota, counting what writes saved along with it add (`pending`, which it joins).
 */
export class QuotaGate {
  constructor(private readonly quotas: Quotas) {}

  /** A new group of writes, saved together: nothing pending yet. */
  group(): Growth {
    return new Growth();
  }

  /** Refuses `batch` if it would take a quota past its size; else counts it in `pending`. */
  admit(batch: WriteBatch, earlier: ChangeSet, pending: Growth): void {
    const growth = growthOf(batch.own, earlier);
    if (!batch.unmetered) this.quotas.admit(growth, pending);
    pending.merge(growth);
  }
}

function growthOf(own: ChangeSet, earlier: ChangeSet): Growth {
  const growth = new Growth();
  for (const [collection, changes] of own.byCollection) {
    const kind = collection.quotaKind;
    if (kind === undefined) continue;
    for (const [key, change] of changes) {
      const before = earlier.find(collection, key);
      const previous = before ? before.record : collection.get(change.tenantId, change.id);
      const added = change.record ? collection.weightOf(change.record) : 0;
      growth.add(change.tenantId, kind, added - (previous ? collection.weightOf(previous) : 0));
    }
  }
  return growth;
}

/** Each staged write's weight, found once: a transaction is rewritten whole at every write that joins it. */
const stagedWeights = new WeakMap<StagedOp, number>();

/** A transaction weighs its fields and its staged writes, each of which is weighed once. */
export function transactionWeight(transaction: TransactionRecord): number {
  let weight = jsonWeight({ ...transaction, staged: [] });
  for (const op of transaction.staged) {
    let opWeight = stagedWeights.get(op);
    if (opWeight === undefined) stagedWeights.set(op, (opWeight = jsonWeight(op)));
    weight += opWeight + 1;
  }
  return weight;
}

/**
 * A token weighs its sealed secret, its containers and metadata (bounded in count: src/api/limits.ts)
 * and the rest of its fields as written: what jsonWeight would say, in a tenth of its time (a
 * tokenize of 10,000 weighs each once).
 */
export function tokenWeight(token: TokenRecord): number {
  const { secret, containers, metadata } = token;
  let weight = TOKEN_OVERHEAD + token.id.length + token.tenant_id.length + token.type.length;
  weight += token.created_at.length + (token.created_by?.length ?? 4) + (token.expires_at?.length ?? 2);
  weight += secret.iv.length + secret.tag.length + secret.ct.length;
  for (const container of containers) weight += container.length + 3;
  for (const key in metadata) weight += key.length + (metadata[key]?.length ?? 0) + 6;
  return weight;
}

/** The names, quotes and punctuation of a token's fields as written (`{"id":"","tenant_id":""…}`). */
const TOKEN_OVERHEAD = 150;
