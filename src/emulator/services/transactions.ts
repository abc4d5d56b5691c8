import { randomUUID } from 'node:crypto';
import type { Transaction } from '../../api/types.js';
import { HttpError } from '../errors.js';
import type { Store } from '../store/store.js';
import type { StagedOp, TransactionRecord } from '../store/records.js';
import type { Caller, Clock } from './applications.js';

export type Tier = 'enterprise' | 'standard';

export const DEFAULT_TRANSACTION_TTL_MS = 60 * 60 * 1000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The 403 of an Enterprise-tier feature asked of an emulator running the standard tier. */
export function enterpriseOnly(feature: string): HttpError {
  return new HttpError(403, `${feature} is an Enterprise-tier feature; this emulator runs the standard tier (start it with --tier enterprise).`, undefined, 'Enterprise tier required');
}

/**
 * Transactions (Enterprise tier): token writes carrying `SVC-TRANSACTION-ID` are staged in the
 * transaction, invisible outside it, until commit applies them all; rollback and expiry discard
 * them. Staged writes are stored with the transaction, so they survive a restart until it expires.
 */
export class TransactionService {
  /** Transactions whose commit is writing: no write may join them meanwhile. */
  private readonly committing = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly tier: Tier,
    private readonly ttlMs: number = DEFAULT_TRANSACTION_TTL_MS,
    private readonly clock: Clock = () => new Date(),
  ) {}

  async create(caller: Caller): Promise<Transaction> {
    this.requireEnterprise();
    const now = this.clock();
    const record: TransactionRecord = {
      id: randomUUID(),
      tenant_id: caller.tenantId,
      created_by: caller.application.id,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + this.ttlMs).toISOString(),
      status: 'open',
      staged: [],
    };
    await this.store.transactions.put(record);
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

  async stage(transaction: TransactionRecord, ops: StagedOp[]): Promise<void> {
    const current = this.store.transactions.get(transaction.tenant_id, transaction.id) ?? transaction;
    await this.store.transactions.put({ ...current, staged: [...current.staged, ...ops] });
  }

  /**
   * Applies every staged write, then marks the transaction committed. Writes naming it are refused
   * (409) from the start of the commit. Should the process stop half way, the transaction is still
   * open with the same staged writes, and committing it again completes the work.
   */
  async commit(caller: Caller, id: string): Promise<void> {
    const record = this.open(caller, id);
    this.checkConflicts(record);
    this.committing.add(record.id);
    try {
      await Promise.all(
        record.staged.map((op) =>
          op.op === 'put' ? this.store.tokens.put(op.record) : this.store.tokens.delete(record.tenant_id, op.id),
        ),
      );
      await this.end(record, 'committed');
    } finally {
      this.committing.delete(record.id);
    }
  }

  /**
   * A staged token whose id was taken outside the transaction meanwhile cannot be committed. The
   * transaction's own earlier delete frees an id; an expired token does not hold one; a token that
   * is exactly the staged one (a commit cut short and repeated) is no conflict.
   */
  private checkConflicts(record: TransactionRecord): void {
    const freed = new Set<string>();
    const now = this.clock().getTime();
    for (const op of record.staged) {
      if (op.op === 'delete') {
        freed.add(op.id);
        continue;
      }
      const existing = this.store.tokens.get(record.tenant_id, op.record.id);
      const live = existing && (existing.expires_at === null || Date.parse(existing.expires_at) > now);
      if (live && !freed.has(op.record.id) && existing.secret.ct !== op.record.secret.ct) {
        throw new HttpError(409, `Token ${op.record.id} was created outside transaction ${record.id} meanwhile; roll the transaction back.`);
      }
    }
  }

  async rollback(caller: Caller, id: string): Promise<void> {
    await this.end(this.open(caller, id), 'rolled_back');
  }

  /** Ends every open transaction whose time is up, discarding its staged writes. */
  async sweep(): Promise<number> {
    const due = [...this.store.transactions.everything()].filter((record) => record.status === 'open' && this.isPast(record));
    await Promise.all(due.map((record) => this.end(record, 'expired')));
    return due.length;
  }

  private find(caller: Caller, id: string): TransactionRecord {
    if (!UUID.test(id)) throw new HttpError(400, `The transaction id "${id}" is not a UUID.`, { 'SVC-TRANSACTION-ID': ['must be a UUID'] });
    const record = this.store.transactions.get(caller.tenantId, id.toLowerCase());
    if (!record) throw new HttpError(404, `No transaction with id ${id}.`);
    if (record.status === 'open' && this.isPast(record)) {
      // Expired but not yet swept: it is expired all the same; the sweep will store that.
      return { ...record, status: 'expired', staged: [] };
    }
    return record;
  }

  private isPast(record: TransactionRecord): boolean {
    return Date.parse(record.expires_at) <= this.clock().getTime();
  }

  private async end(record: TransactionRecord, status: 'committed' | 'rolled_back' | 'expired'): Promise<void> {
    await this.store.transactions.put({ ...record, status, staged: [], ended_at: this.clock().toISOString() });
  }

  requireEnterprise(): void {
    if (this.tier !== 'enterprise') throw enterpriseOnly('Transactions');
  }
}

function toWire(record: TransactionRecord): Transaction {
  const { id, created_at, created_by, expires_at, status } = record;
  return { id, created_at, created_by, expires_at, status };
}
