import { randomUUID } from 'node:crypto';
import { TOKEN_ID_PATTERN, TOKEN_ID_RULE } from '../../api/patterns.js';
import type { CreateTokenBody } from '../../api/types.js';
import { TOKEN_TYPES } from '../../api/types.js';
import { MAX_DEPTH, exceedsDepth } from '../../lib/json-depth.js';
import type { Cipher } from '../crypto/cipher.js';
import { FieldErrors } from '../errors.js';
import type { WriteBatch } from '../store/batch.js';
import type { StagedOp, TokenRecord, TransactionRecord } from '../store/records.js';
import type { Store } from '../store/store.js';
import { CONTAINER_PATTERN, evaluateAccess, normalizeContainer } from './access.js';
import type { Caller } from './applications.js';
import type { TenantClocks } from './tenant-clocks.js';
import { requireTenantRow } from './tenant-fork.js';
import { PermissionDenied } from './permission-denied.js';
import { DEFAULT_CONTAINERS, defaultMask, normalizeTokenData } from './token-types.js';
import { indexStaged, isExpired, type StagedIndex, type TokenContext, type TokenView } from './token-view.js';
import type { TransactionService } from './transactions.js';

/** What a token's record seals: its data and mask. */
export interface Secret {
  data: unknown;
  mask?: unknown;
}

/** A token validated and sealed, not yet saved. */
export interface Prepared {
  record: TokenRecord;
  secret: Secret;
  /** The field of a caller-chosen id (`id`, `[2].id`), which must still be free when the write is saved. */
  idField?: string;
}

// The last three are taken as the platform takes them and not acted on (docs/fidelity.md).
const TOKEN_FIELDS = new Set([
  'id',
  'type',
  'data',
  'containers',
  'metadata',
  'mask',
  'expires_at',
  'fingerprint_expression',
  'deduplicate_token',
  'search_indexes',
]);
const CUSTOM_ID = new RegExp(TOKEN_ID_PATTERN);

/** What a token's secret is sealed with (its tenant and id), so that it opens as that token only. */
export function sealContext(tenantId: string, id: string): string {
  return `token:${tenantId}:${id}`;
}

/**
 * The making of tokens (a create's and a tokenize's): each body validated and sealed into its
 * record, `token:create` checked where they are placed, and all of a request's saved in one write.
 */
export class TokenCreator {
  constructor(
    private readonly store: Store,
    private readonly cipher: Cipher,
    private readonly transactions: TransactionService,
    private readonly clocks: TenantClocks,
    private readonly view: TokenView,
  ) {}

  /** Validates one token body and builds its sealed record; problems go to `errors` under `at`. */
  prepare(
    ctx: TokenContext,
    body: CreateTokenBody,
    errors: FieldErrors,
    at: string,
    ids: Set<string>,
    transaction: TransactionRecord | undefined,
    staged?: StagedIndex,
  ): Prepared | undefined {
    const field = (name: string) => (at ? `${at}.${name}` : name);
    const before = errors.count;
    const type = body.type;
    const now = this.clocks.now(ctx.caller.tenantId);
    for (const key of Object.keys(body)) {
      if (!TOKEN_FIELDS.has(key))
        errors.add(field(key), `is not a known field (fields: ${[...TOKEN_FIELDS].join(', ')})`);
    }
    if (!TOKEN_TYPES.includes(type)) {
      errors.add(field('type'), `must be one of: ${TOKEN_TYPES.join(', ')}`);
      return undefined;
    }
    // Sealing stringifies data and mask: nesting is bounded first (req.svc values come unparsed).
    for (const name of ['data', 'mask'] as const) {
      if (exceedsDepth(body[name], MAX_DEPTH)) errors.add(field(name), `is nested deeper than ${MAX_DEPTH} levels`);
    }
    if (errors.count > before) return undefined;
    const data = normalizeTokenData(type, body.data, errors, now, field('data'));
    const containers = (body.containers ?? [DEFAULT_CONTAINERS[type]]).map(normalizeContainer);
    containers.forEach((container, i) => {
      if (!CONTAINER_PATTERN.test(container)) {
        errors.add(
          field(`containers[${i}]`),
          'must start and end with "/" and hold only letters, digits, "-" and "_" between slashes (e.g. /pci/high/)',
        );
      }
    });
    const id = body.id ?? randomUUID();
    const idField = body.id === undefined ? undefined : field('id');
    if (body.id !== undefined) {
      if (!CUSTOM_ID.test(body.id)) errors.add(field('id'), TOKEN_ID_RULE);
      else if (ids.has(id) || this.view.visible({ ...ctx, transactionId: transaction?.id }, id, staged))
        errors.add(field('id'), `a token with id ${id} already exists`);
    }
    ids.add(id);
    if (body.expires_at != null && !(Date.parse(body.expires_at) > now.getTime()))
      errors.add(field('expires_at'), 'must be a date-time in the future');
    if (errors.count > before) return undefined;
    const secret: Secret = { data, mask: body.mask ?? defaultMask(type, data) };
    const record: TokenRecord = {
      id,
      tenant_id: ctx.caller.tenantId,
      type,
      containers: [...new Set(containers)],
      metadata: body.metadata ?? {},
      created_by: ctx.caller.application.id,
      created_at: now.toISOString(),
      expires_at: body.expires_at == null ? null : new Date(body.expires_at).toISOString(),
      secret: this.cipher.seal(secret, sealContext(ctx.caller.tenantId, id)),
    };
    return { record, secret, ...(idField !== undefined && { idField }) };
  }

  /** Placing a token in a container needs token:create there: in every container it is placed in. */
  checkCreate(caller: Caller, prepared: Prepared[]): void {
    for (const { record } of prepared) {
      const denied = record.containers.find(
        (container) => !evaluateAccess(caller.application, 'token:create', container).allowed,
      );
      if (denied) throw new PermissionDenied({ permission: 'token:create', containers: [denied] }, caller.application);
    }
  }

  /**
   * Saves the tokens of one request in one write: all of them or none, across a crash too. The
   * ids callers chose are checked again when the write is saved: a request saved meanwhile may
   * have taken one.
   */
  async write(transaction: TransactionRecord | undefined, prepared: Prepared[]): Promise<void> {
    if (transaction) {
      const ops = prepared.map(({ record }): StagedOp => ({ op: 'put', record }));
      await this.transactions.stage(transaction, ops, (batch, staged) => this.checkIdsFree(batch, prepared, staged));
      return;
    }
    await this.store.write((batch) => {
      // A tokenize yields while it prepares: its tenant may be gone by its write's turn.
      if (prepared[0]) requireTenantRow(this.store, batch, prepared[0].record.tenant_id);
      this.checkIdsFree(batch, prepared, []);
      for (const { record } of prepared) batch.put(this.store.tokens, record);
    });
  }

  private checkIdsFree(batch: WriteBatch, prepared: Prepared[], staged: StagedOp[]): void {
    const errors = new FieldErrors();
    const index = indexStaged(staged);
    for (const { record, idField } of prepared) {
      if (idField === undefined) continue;
      const now = this.clocks.ms(record.tenant_id);
      const inTransaction = index.get(record.id);
      const latest =
        inTransaction === undefined ? batch.get(this.store.tokens, record.tenant_id, record.id) : inTransaction;
      if (latest && !isExpired(latest, now)) errors.add(idField, `a token with id ${record.id} already exists`);
    }
    errors.throwIfAny();
  }
}
