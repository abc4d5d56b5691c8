import { randomUUID } from 'node:crypto';
import { TRANSACTION_HEADER } from '../../api/headers.js';
import { isUuid } from '../../api/patterns.js';
import { PROBLEM_TYPES } from '../../api/problem.js';
import type { Tier } from '../../api/tiers.js';
import type { Transaction } from '../../api/types.js';
import { HttpError } from '../errors.js';
import type { WriteBatch } from '../store/batch.js';
import type { Store } from '../store/store.js';
import type { StagedOp, TransactionRecord } from '../store/records.js';
import type { Caller } from './applications.js';
import { type Clock, type TenantClocks, tenantClocks } from './tenant-clocks.js';

export const DEFAULT_TRANSACTION_TTL_MS = 60 * 60 * 1000;
/** How long an ended transaction (committed, rolled back, expired) can still be read, from its end. */
export const DEFAULT_TRANSACTION_RETENTION_MS = 24 * 3_600_000;
/** Transactions kept per tenant at most: the oldest ended ones go first, an open one never. */
export const DEFAULT_MAX_TRANSACTIONS_PER_TENANT = 10_000;

/** How long ended transactions are kept, and how many per tenant (tests make both small). */
export interface TransactionRetention {
  retentionMs?: number;
  maxPerTenant?: number;
}

/** The 403 of an Enterprise-tier feature asked of an emulator running the standard tier. */
export function enterpriseOnly(feature: string): HttpError {
  return new HttpError(403, `${feature} is an Enterprise-tier feature; this emulator runs the standard tier.`, {
    title: 'Enterprise tier required',
    type: PROBLEM_TYPES.tierRequired,
  });
}

/**
 * Transactions (Enterprise tier): token writes carrying `SVC-TRANSACTION-ID` are staged in the
 * transaction, invisible outside it, until commit applies them all; rollback and expiry discard
 * them. Staged writes are stored with the transaction, so they survive a restart until it expires.
 * An ended transaction is kept 24 h from its end (`GET` reads its status meanwhile), then removed by
 * the sweep, and past 10,000 per tenant the oldest ended go at once: with the store's shards, the
 * cost of a transaction's write does not grow with the transactions before it.
 */
export class TransactionService {
  /** Transactions whose commit is writing: no write may join them meanwhile. */
  private readonly committing = new Set<string>();
  readonly retentionMs: number;
  private readonly maxPerTenant: number;
  private readonly clocks: TenantClocks;

  constructor(
    private readonly store: Store,
    private readonly tier: Tier,
    private readonly ttlMs: number = DEFAULT_TRANSACTION_TTL_MS,
    clock?: Clock | TenantClocks,
    retention: TransactionRetention = {},
  ) {
    this.clocks = tenantClocks(clock);
    this.retentionMs = retention.retentionMs ?? DEFAULT_TRANSACTION_RETENTION_MS;
    this.maxPerTenant = retention.maxPerTenant ?? DEFAULT_MAX_TRANSACTIONS_PER_TENANT;
  }

  async create(caller: Caller): Promise<Transaction> {
    this.requireEnterprise();
    const now = this.clocks.now(caller.tenantId);
    const record: TransactionRecord = {
      id: randomUUID(),
      tenant_id: caller.tenantId,
      created_by: caller.application.id,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + this.ttlMs).toISOString(),
      status: 'open',
      staged: [],
    };
    await this.store.write((batch) => {
      batch.put(this.store.transactions, record);
      this.makeRoom(batch, caller.tenantId);
    });
    return toWire(record);
  }

  get(caller: Caller, id: string): Transaction {
    this.requireEnterprise();
    return toWire(this.find(caller, id));
  }

  /** The open transaction a token write names: 404 when unknown, 409 when no longer open. */
  open(caller: Caller, id: string): TransactionRecord {
    this.requireEnterprise();
    const record = this.find(caller, id);
    if (record.status !== 'open') {
      throw new HttpError(409, `Transaction ${id} is ${record.status.replace('_', ' ')}, not open.`);
    }
    if (this.committing.has(record.id)) throw new HttpError(409, `Transaction ${id} is being committed.`);
    return record;
  }

  /**
   * Adds writes to a transaction, checked again when the write is saved: the transaction must
   * still be open then, and `check` (e.g. ids still free) sees its staged writes as they are then.
   */
  async stage(
    transaction: TransactionRecord,
    ops: StagedOp[],
    check?: (batch: WriteBatch, staged: StagedOp[]) => void,
  ): Promise<void> {
    await this.store.write((batch) => {
      const current = this.stillOpen(batch, transaction);
      check?.(batch, current.staged);
      batch.put(this.store.transactions, { ...current, staged: [...current.staged, ...ops] });
    });
  }

  /**
   * Applies every staged write and marks the transaction committed, in one write: all of it is
   * saved or none, across a crash too. Writes naming the transaction are refused (409) from the
   * start of the commit; those accepted before it are part of it.
   */
  async commit(caller: Caller, id: string): Promise<void> {
    const record = this.open(caller, id);
    this.committing.add(record.id);
    try {
      await this.store.write((batch) => {
        const current = this.stillOpen(batch, record);
        this.checkConflicts(batch, current);
        for (const op of current.staged) {
          if (op.op === 'put') batch.put(this.store.tokens, op.record);
          else batch.delete(this.store.tokens, current.tenant_id, op.id);
        }
        this.end(batch, current, 'committed');
      });
    } finally {
      this.committing.delete(record.id);
    }
  }

  /**
   * A staged token whose id was taken outside the transaction meanwhile cannot be committed. The
   * transaction's own earlier delete frees an id; an expired token does not hold one; a token that
   * is exactly the staged one (a commit an older svc cut short) is no conflict.
   */
  private checkConflicts(batch: WriteBatch, record: TransactionRecord): void {
    const freed = new Set<string>();
    const now = this.clocks.ms(record.tenant_id);
    for (const op of record.staged) {
      if (op.op === 'delete') {
        freed.add(op.id);
        continue;
      }
      const existing = batch.get(this.store.tokens, record.tenant_id, op.record.id);
      const live = existing && (existing.expires_at === null || Date.parse(existing.expires_at) > now);
      if (live && !freed.has(op.record.id) && existing.secret.ct !== op.record.secret.ct) {
        throw new HttpError(
          409,
          `Token ${op.record.id} was created outside transaction ${record.id} meanwhile; roll the transaction back.`,
        );
      }
    }
  }

  async rollback(caller: Caller, id: string): Promise<void> {
    const record = this.open(caller, id);
    await this.store.write((batch) => this.end(batch, this.stillOpen(batch, record), 'rolled_back'));
  }

  /**
   * Ends every open transaction whose time is up, discarding its staged writes, and removes the
   * ended ones past their retention; returns how many it ended or removed.
   */
  async sweep(): Promise<number> {
    const due = [...this.store.transactions.everything()].filter(
      (record) => (record.status === 'open' && this.isPast(record)) || this.pastRetention(record),
    );
    if (due.length === 0) return 0;
    return this.store.write((batch) => {
      let swept = 0;
      for (const record of due) {
        const current = batch.get(this.store.transactions, record.tenant_id, record.id);
        if (current === undefined) continue;
        if (this.pastRetention(current)) {
          batch.delete(this.store.transactions, current.tenant_id, current.id);
          swept++;
        } else if (current.status === 'open' && this.isPast(current)) {
          this.end(batch, current, 'expired');
          swept++;
        }
      }
      return swept;
    });
  }

  /**
   * In the write of a new transaction: drops the tenant's oldest ended transactions while it holds
   * more than its cap. Counted from what is saved plus the new one, less what writes saved along with
   * it drop; what they add is counted by the next write, so no more are dropped than the cap asks.
   */
  private makeRoom(batch: WriteBatch, tenantId: string): void {
    const { transactions } = this.store;
    let excess = transactions.count(tenantId) + 1 - this.maxPerTenant;
    for (const saved of transactions.values(tenantId)) {
      if (excess <= 0) break;
      const record = batch.get(transactions, tenantId, saved.id);
      if (!record) excess--;
      else if (record.status !== 'open' && batch.delete(transactions, tenantId, record.id)) excess--;
    }
  }

  /**
   * Ended, and for longer than the retention: removed by the next sweep, and a 404 meanwhile. An
   * open one past its time (not yet swept: the emulator was down) ended when it expired.
   */
  private pastRetention(record: TransactionRecord): boolean {
    if (record.status === 'open' && !this.isPast(record)) return false;
    const endedAt = Date.parse(record.status === 'open' ? record.expires_at : (record.ended_at ?? record.expires_at));
    return endedAt + this.retentionMs <= this.clocks.ms(record.tenant_id);
  }

  /** The transaction as it is when a write is saved; 409 unless it is still open. */
  private stillOpen(batch: WriteBatch, transaction: TransactionRecord): TransactionRecord {
    const current = batch.get(this.store.transactions, transaction.tenant_id, transaction.id);
    if (current?.status !== 'open' || this.isPast(current)) {
      const status = !current ? 'gone' : current.status === 'open' ? 'expired' : current.status.replace('_', ' ');
      throw new HttpError(409, `Transaction ${transaction.id} is ${status}, not open.`);
    }
    return current;
  }

  private find(caller: Caller, id: string): TransactionRecord {
    if (!isUuid(id))
      throw new HttpError(400, `The transaction id "${id}" is not a UUID.`, {
        errors: { [TRANSACTION_HEADER.toUpperCase()]: ['must be a UUID'] },
      });
    const record = this.store.transactions.get(caller.tenantId, id.toLowerCase());
    if (!record || this.pastRetention(record)) {
      const kept = `ended transactions are kept ${formatDuration(this.retentionMs)} after they end`;
      throw new HttpError(404, `No transaction with id ${id} (${kept}).`);
    }
    if (record.status === 'open' && this.isPast(record)) {
      // Expired but not yet swept: it is expired all the same; the sweep will store that.
      return { ...record, status: 'expired', staged: [] };
    }
    return record;
  }

  private isPast(record: TransactionRecord): boolean {
    return Date.parse(record.expires_at) <= this.clocks.ms(record.tenant_id);
  }

  /** An expired transaction ended at its `expires_at`, however late the sweep saw it: its retention counts from there. */
  private end(batch: WriteBatch, record: TransactionRecord, status: 'committed' | 'rolled_back' | 'expired'): void {
    const endedAt = status === 'expired' ? record.expires_at : this.clocks.now(record.tenant_id).toISOString();
    batch.put(this.store.transactions, { ...record, status, staged: [], ended_at: endedAt });
  }

  requireEnterprise(): void {
    if (this.tier !== 'enterprise') throw enterpriseOnly('Transactions');
  }
}

/** `24 h`, `90 min`, `1.5 s`: the retention, as the 404 of a removed transaction says it. */
function formatDuration(ms: number): string {
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${ms / 1000} s`;
}

function toWire(record: TransactionRecord): Transaction {
  const { id, created_at, created_by, expires_at, status } = record;
  return { id, created_at, created_by, expires_at, status };
}
