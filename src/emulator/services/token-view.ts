import type { Store } from '../store/store.js';
import type { StagedOp, TokenRecord, TransactionRecord } from '../store/records.js';
import type { Caller } from './applications.js';
import type { TenantClocks } from './tenant-clocks.js';
import type { TransactionService } from './transactions.js';
import type { CallSecrets } from '../leaks/secrets.js';

/** Who acts on tokens, and in which transaction (the `SVC-TRANSACTION-ID` header), if any. */
export interface TokenContext {
  caller: Caller;
  transactionId?: string | undefined;
  /** Where the plaintext a detokenization reveals is kept for the leak guard (a call's; leaks/secrets.ts). */
  secrets?: CallSecrets | undefined;
}

/** A token's state in a transaction, by id: the record, or null when deleted there. */
export type StagedIndex = ReadonlyMap<string, TokenRecord | null>;

/**
 * The tokens a caller sees: the committed ones that have not expired, overlaid by the staged
 * writes of the caller's own transaction (`SVC-TRANSACTION-ID`), if any.
 */
export class TokenView {
  constructor(
    private readonly store: Store,
    private readonly transactions: TransactionService,
    private readonly clocks: TenantClocks,
  ) {}

  /** The caller's open transaction, or undefined outside one. */
  transactionOf(ctx: TokenContext): TransactionRecord | undefined {
    return ctx.transactionId === undefined ? undefined : this.transactions.open(ctx.caller, ctx.transactionId);
  }

  /**
   * A token as this caller sees it: committed, overlaid by its own transaction's staged writes
   * (`staged`, indexed once when many tokens are looked up).
   */
  visible(ctx: TokenContext, id: string, staged?: StagedIndex): TokenRecord | undefined {
    const inTransaction = staged ? staged.get(id) : stagedState(this.stagedOps(ctx), id);
    if (inTransaction !== undefined) return inTransaction ?? undefined;
    const record = this.store.tokens.get(ctx.caller.tenantId, id);
    return record && !isExpired(record, this.clocks.ms(ctx.caller.tenantId)) ? record : undefined;
  }

  /** Every token the caller sees. */
  all(ctx: TokenContext): TokenRecord[] {
    const now = this.clocks.ms(ctx.caller.tenantId);
    const byId = new Map(
      this.store.tokens
        .list(ctx.caller.tenantId)
        .filter((record) => !isExpired(record, now))
        .map((record) => [record.id, record]),
    );
    for (const op of this.stagedOps(ctx)) {
      if (op.op === 'put') byId.set(op.record.id, op.record);
      else byId.delete(op.id);
    }
    return [...byId.values()];
  }

  /** The caller's transaction's staged writes by token id (empty outside a transaction). */
  stagedIndex(ctx: TokenContext): StagedIndex {
    return indexStaged(this.stagedOps(ctx));
  }

  private stagedOps(ctx: TokenContext): StagedOp[] {
    return ctx.transactionId === undefined ? [] : this.transactions.open(ctx.caller, ctx.transactionId).staged;
  }
}

/** A token's state in a transaction's staged writes: the record, null when deleted, undefined when untouched. */
function stagedState(staged: StagedOp[], id: string): TokenRecord | null | undefined {
  for (let i = staged.length - 1; i >= 0; i--) {
    const op = staged[i]!;
    if (op.op === 'put' && op.record.id === id) return op.record;
    if (op.op === 'delete' && op.id === id) return null;
  }
  return undefined;
}

/**
 * A transaction's staged writes by token id, the latest of each: the record, or null when deleted.
 * Built once per request, where a search per token made a large tokenize quadratic.
 */
export function indexStaged(staged: readonly StagedOp[]): StagedIndex {
  const index = new Map<string, TokenRecord | null>();
  for (const op of staged) {
    if (op.op === 'put') index.set(op.record.id, op.record);
    else index.set(op.id, null);
  }
  return index;
}

/** Whether a token's `expires_at` has passed at `now` (ms). */
export function isExpired(record: TokenRecord, now: number): boolean {
  return record.expires_at !== null && Date.parse(record.expires_at) <= now;
}
