import { randomUUID } from 'node:crypto';
import { setImmediate as yieldToOthers } from 'node:timers/promises';
import {
  DETOKENIZED_LIMIT_BYTES,
  BODY_LIMIT_LABEL,
  DETOKENIZE_EXPRESSION_LIMIT,
  DETOKENIZE_LIMIT,
  TOKENIZE_LIMIT,
  TOKENIZE_VALUE_LIMIT,
} from '../../api/limits.js';
import { TOKEN_ID_PATTERN, TOKEN_ID_RULE } from '../../api/patterns.js';
import type { RuleTransform } from '../../api/permissions.js';
import type { CreateTokenBody, Page, Token, TokenListQuery } from '../../api/types.js';
import { TOKEN_TYPES } from '../../api/types.js';
import {
  countExpressions,
  ExpansionLimitError,
  type ExpressionCount,
  substitute,
  substituteInJsonText,
  substituteInText,
} from '../../expressions/index.js';
import { MAX_DEPTH, exceedsDepth } from '../../lib/json-depth.js';
import { FieldErrors, HttpError } from '../errors.js';
import type { WriteBatch } from '../store/batch.js';
import type { Store } from '../store/store.js';
import type { StagedOp, TokenRecord, TransactionRecord } from '../store/records.js';
import { CONTAINER_PATTERN, evaluateAccess, evaluateTokenAccess, holdsAnywhere, normalizeContainer } from './access.js';
import type { Caller, Clock } from './applications.js';
import type { Cipher } from '../crypto/cipher.js';
import { filterItems, paginate } from './pagination.js';
import { DEFAULT_CONTAINERS, defaultMask, normalizeTokenData } from './token-types.js';
import type { TransactionService } from './transactions.js';

/** Who acts on tokens, and in which transaction (the `SVC-TRANSACTION-ID` header), if any. */
export interface TokenContext {
  caller: Caller;
  transactionId?: string | undefined;
}

interface Secret {
  data: unknown;
  mask?: unknown;
}

interface Prepared {
  record: TokenRecord;
  secret: Secret;
  /** The field of a caller-chosen id (`id`, `[2].id`), which must still be free when the write is saved. */
  idField?: string;
}

const TOKEN_FIELDS = new Set(['id', 'type', 'data', 'containers', 'metadata', 'mask', 'expires_at']);
const CUSTOM_ID = new RegExp(TOKEN_ID_PATTERN);

/** Tokens a tokenize prepares (validates and seals) before it lets other requests run. */
const PREPARE_SLICE = 250;

/** The most bytes a detokenized value may take, and how a refusal names that limit. */
export interface OutputLimit {
  bytes: number;
  says: string;
}

const PAYLOAD_LIMIT: OutputLimit = { bytes: DETOKENIZED_LIMIT_BYTES, says: `the ${BODY_LIMIT_LABEL} payload limit` };

/**
 * How a proxy body is detokenized: its expressions when the caller has counted them already
 * (`expressionsIn`), and the most it may take once detokenized (the payload limit when not given).
 */
export interface BodyExpansion {
  found?: ExpressionCount;
  limit?: OutputLimit;
}

/**
 * The expressions in `value`, counted no further than one past the limits (`limit` tokens,
 * DETOKENIZE_EXPRESSION_LIMIT expressions): what detokenizing it would have to refuse.
 */
export function expressionsIn(value: unknown, limit = DETOKENIZE_LIMIT): ExpressionCount {
  return countExpressions(value, { ids: limit, occurrences: DETOKENIZE_EXPRESSION_LIMIT });
}

/** A token's state in a transaction, by id: the record, or null when deleted there. */
type StagedIndex = ReadonlyMap<string, TokenRecord | null>;

/**
 * Tokens: create, read, list, delete, tokenize and detokenize, each governed by the caller's
 * permissions and access rules (first matching rule by priority decides; plain permissions apply
 * everywhere with the implicit transform). Token data is sealed before it reaches the store.
 */
export class TokenService {
  constructor(
    private readonly store: Store,
    private readonly cipher: Cipher,
    private readonly transactions: TransactionService,
    private readonly clock: Clock = () => new Date(),
    /** Hears of tokens left out of a list because they cannot be decrypted (their id, never data). */
    private readonly report: (message: string) => void = () => {},
  ) {}

  /** Records already reported as unreadable: one report per stored record, however often it is listed. */
  private readonly reported = new WeakSet<TokenRecord>();

  async create(ctx: TokenContext, body: CreateTokenBody): Promise<Token> {
    const transaction = this.transactionOf(ctx);
    const errors = new FieldErrors();
    const prepared = this.prepare(ctx, body, errors, '', new Set(), transaction);
    errors.throwIfAny();
    this.checkCreate(ctx.caller, [prepared!]);
    await this.write(transaction, [prepared!]);
    return this.present(ctx.caller, prepared!.record, prepared!.secret);
  }

  get(ctx: TokenContext, id: string): Token {
    const record = this.visible(ctx, id);
    if (!record) throw new HttpError(404, `No token with id ${id}.`);
    const decision = evaluateTokenAccess(ctx.caller.application, 'token:read', record.containers);
    if (!decision.allowed) throw forbidden(ctx.caller, 'token:read', record);
    return this.present(ctx.caller, record, this.unseal(record), decision.transform);
  }

  /** Lists the tokens the caller may read; the others are left out, not refused. */
  list(ctx: TokenContext, query: TokenListQuery): Page<Token> {
    requireSomewhere(ctx.caller, 'token:read');
    // A path prefix: `/pci` means `/pci/` and what is below it, never `/pcix/`.
    const container =
      query.container === undefined
        ? undefined
        : normalizeContainer(query.container.endsWith('/') ? query.container : `${query.container}/`);
    const readable = this.all(ctx).flatMap((record) => {
      if (query.type !== undefined && record.type !== query.type) return [];
      if (container !== undefined && !record.containers.some((c) => c.startsWith(container))) return [];
      const decision = evaluateTokenAccess(ctx.caller.application, 'token:read', record.containers);
      return decision.allowed ? [{ record, transform: decision.transform }] : [];
    });
    const page = paginate(
      filterItems(
        readable.map((item) => ({ ...item, id: item.record.id })),
        query,
      ),
      query,
    );
    // A token that cannot be decrypted (damaged data, or sealed under another master key) is left
    // out of its page and reported, so that one bad record does not make the whole list fail.
    // Only the page is decrypted, as before: its total still counts the token, pages stay aligned.
    const data = page.data.flatMap(({ record, transform }) => {
      const secret = this.tryUnseal(record);
      return secret === undefined ? [] : [this.present(ctx.caller, record, secret, transform)];
    });
    return { ...page, data };
  }

  async delete(ctx: TokenContext, id: string): Promise<void> {
    const transaction = this.transactionOf(ctx);
    const record = this.visible(ctx, id);
    if (!record) throw new HttpError(404, `No token with id ${id}.`);
    if (!evaluateTokenAccess(ctx.caller.application, 'token:delete', record.containers).allowed) {
      throw forbidden(ctx.caller, 'token:delete', record);
    }
    if (transaction) {
      await this.transactions.stage(transaction, [{ op: 'delete', id: record.id }]);
      return;
    }
    const deleted = await this.store.write((batch) => {
      const latest = batch.get(this.store.tokens, record.tenant_id, record.id);
      return (
        latest !== undefined &&
        !isExpired(latest, this.clock().getTime()) &&
        batch.delete(this.store.tokens, record.tenant_id, record.id)
      );
    });
    if (!deleted) throw new HttpError(404, `No token with id ${id}.`);
  }

  /**
   * Tokenizes a nested value, all or nothing: `{type, data, ...}` objects become tokens (answered
   * as token objects), other primitive leaves become `token` tokens (answered by id); arrays and
   * other objects are walked. Nothing is written unless every token is valid and permitted. At
   * most TOKENIZE_LIMIT tokens in TOKENIZE_VALUE_LIMIT values (counted before any work), prepared
   * a slice at a time so that other requests are served meanwhile.
   */
  async tokenize(ctx: TokenContext, value: unknown): Promise<unknown> {
    requireSomewhere(ctx.caller, 'token:create');
    checkDepth(value);
    checkTokenizeSize(value);
    const transaction = this.transactionOf(ctx);
    const errors = new FieldErrors();
    const ids = new Set<string>();
    const sites: { body: CreateTokenBody; at: string }[] = [];
    const made: (Prepared | undefined)[] = [];
    const plan = (node: unknown, at: string): (() => unknown) => {
      if (node === null) return () => null;
      if (isTokenSpec(node)) {
        const site = sites.push({ body: node as CreateTokenBody, at }) - 1;
        return () => this.present(ctx.caller, made[site]!.record, made[site]!.secret);
      }
      if (Array.isArray(node)) {
        const items = node.map((child, i) => plan(child, `${at}[${i}]`));
        return () => items.map((item) => item());
      }
      if (typeof node === 'object') {
        const entries: [string, () => unknown][] = [];
        for (const key in node) {
          const child = (node as Record<string, unknown>)[key];
          entries.push([key, plan(child, at ? `${at}.${key}` : key)]);
        }
        return () => fromEntries(entries.map(([key, item]) => [key, item()]));
      }
      const site = sites.push({ body: { type: 'token', data: node }, at }) - 1;
      return () => made[site]!.record.id;
    };
    const build = plan(value, '');
    let staged = this.stagedIndex(ctx);
    for (const [i, { body, at }] of sites.entries()) {
      if (i > 0 && i % PREPARE_SLICE === 0) {
        await yieldToOthers();
        staged = this.stagedIndex(ctx);
      }
      made.push(this.prepare(ctx, body, errors, at, ids, transaction, staged));
    }
    errors.throwIfAny();
    const prepared = made as Prepared[];
    this.checkCreate(ctx.caller, prepared);
    await this.write(transaction, prepared);
    return build();
  }

  /**
   * Replaces every `{{ token_id }}` in `value` with the token's data. Each token needs `token:use`
   * on its container (403); an unknown token is a 400 naming it; more than `limit` tokens is a 400;
   * a result over the payload limit (each occurrence counts) is a 413, refused before it is built.
   */
  detokenize(ctx: TokenContext, value: unknown, limit = DETOKENIZE_LIMIT): unknown {
    checkDepth(value);
    const data = this.resolveExpressions(ctx, expressionsIn(value, limit), limit, PAYLOAD_LIMIT);
    return data.size === 0 ? value : expanding(PAYLOAD_LIMIT, () => substitute(value, data, PAYLOAD_LIMIT.bytes));
  }

  /**
   * Detokenizes a text body (a proxy's, not JSON): a text that is exactly one expression becomes
   * the data as text. Measured in UTF-8 bytes as sent, at most `body.limitBytes`.
   */
  detokenizeText(ctx: TokenContext, text: string, body: BodyExpansion = {}): string {
    const limit = body.limit ?? PAYLOAD_LIMIT;
    const found = body.found ?? expressionsIn(text);
    const data = this.resolveExpressions(ctx, found, DETOKENIZE_LIMIT, limit);
    if (data.size === 0) return text;
    const replaced = expanding(limit, () => substituteInText(text, data, limit.bytes));
    return typeof replaced === 'string' ? replaced : JSON.stringify(replaced);
  }

  /**
   * Detokenizes a JSON document as text: only the string values holding expressions change, the
   * rest of the bytes stay exactly as sent (numbers keep their digits). For proxy bodies.
   */
  detokenizeJsonText(ctx: TokenContext, text: string, parsed: unknown, body: BodyExpansion = {}): string {
    checkDepth(parsed);
    const limit = body.limit ?? PAYLOAD_LIMIT;
    const found = body.found ?? expressionsIn(parsed);
    const data = this.resolveExpressions(ctx, found, DETOKENIZE_LIMIT, limit);
    return data.size === 0 ? text : expanding(limit, () => substituteInJsonText(text, data, limit.bytes));
  }

  /**
   * The data of every token `found`, checked: existing (400), usable here (403), within `limit`
   * tokens and DETOKENIZE_EXPRESSION_LIMIT expressions (400). Each token's data is in the result
   * at least once: their sizes together past `output` are a 413 before the next is decrypted.
   */
  private resolveExpressions(
    ctx: TokenContext,
    found: ExpressionCount,
    limit: number,
    output: OutputLimit,
  ): Map<string, unknown> {
    requireSomewhere(ctx.caller, 'token:use');
    const { ids, occurrences } = found;
    const data = new Map<string, unknown>();
    if (ids.length > limit) {
      // Counted no further than one past the limit.
      throw new HttpError(
        400,
        `At most ${limit} tokens can be detokenized at once; this request references ${ids.length} or more.`,
      );
    }
    if (occurrences > DETOKENIZE_EXPRESSION_LIMIT) {
      const most = DETOKENIZE_EXPRESSION_LIMIT.toLocaleString('en-US');
      throw new HttpError(
        400,
        `At most ${most} {{ }} expressions can be detokenized at once; this request holds more.`,
      );
    }
    const staged = this.stagedIndex(ctx);
    let bytes = 0;
    for (const id of ids) {
      const record = this.visible(ctx, id, staged);
      if (!record)
        throw new HttpError(400, `Token ${id} in a detokenization expression does not exist.`, {
          errors: { [id]: ['no such token'] },
          title: 'Unknown token',
        });
      const decision = evaluateTokenAccess(ctx.caller.application, 'token:use', record.containers);
      if (!decision.allowed) throw forbidden(ctx.caller, 'token:use', record);
      // The rule's transform applies to use as to read: a masked grant detokenizes to the mask.
      const secret = this.unseal(record);
      let used: unknown;
      if (decision.transform === 'reveal') used = secret.data;
      else if (decision.transform === 'mask' && secret.mask !== undefined) used = secret.mask;
      else {
        const how = decision.transform === 'mask' ? 'masked and has no mask' : 'redacted';
        throw new HttpError(
          403,
          `Token ${id} is ${how} for this ${ctx.caller.application.type} Application; detokenizing it needs a reveal rule.`,
        );
      }
      bytes += leastBytes(used);
      if (bytes > output.bytes) throw expansionTooLarge(output);
      data.set(id, used);
    }
    return data;
  }

  /** Deletes expired tokens; returns how many. */
  async sweep(): Promise<number> {
    const now = this.clock().getTime();
    const expired = [...this.store.tokens.everything()].filter((record) => isExpired(record, now));
    if (expired.length === 0) return 0;
    return this.store.write((batch) => {
      let removed = 0;
      for (const record of expired) {
        const latest = batch.get(this.store.tokens, record.tenant_id, record.id);
        if (latest && isExpired(latest, now) && batch.delete(this.store.tokens, record.tenant_id, record.id)) removed++;
      }
      return removed;
    });
  }

  /** Validates one token body and builds its sealed record; problems go to `errors` under `at`. */
  private prepare(
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
    const now = this.clock();
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
      else if (ids.has(id) || this.visible({ ...ctx, transactionId: transaction?.id }, id, staged))
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
  private checkCreate(caller: Caller, prepared: Prepared[]): void {
    for (const { record } of prepared) {
      const denied = record.containers.find(
        (container) => !evaluateAccess(caller.application, 'token:create', container).allowed,
      );
      if (denied)
        throw new HttpError(403, `This ${caller.application.type} Application lacks token:create on ${denied}.`);
    }
  }

  /**
   * Saves the tokens of one request in one write: all of them or none, across a crash too. The
   * ids callers chose are checked again when the write is saved: a request saved meanwhile may
   * have taken one.
   */
  private async write(transaction: TransactionRecord | undefined, prepared: Prepared[]): Promise<void> {
    if (transaction) {
      const ops = prepared.map(({ record }): StagedOp => ({ op: 'put', record }));
      await this.transactions.stage(transaction, ops, (batch, staged) => this.checkIdsFree(batch, prepared, staged));
      return;
    }
    await this.store.write((batch) => {
      this.checkIdsFree(batch, prepared, []);
      for (const { record } of prepared) batch.put(this.store.tokens, record);
    });
  }

  private checkIdsFree(batch: WriteBatch, prepared: Prepared[], staged: StagedOp[]): void {
    const errors = new FieldErrors();
    const now = this.clock().getTime();
    const index = indexStaged(staged);
    for (const { record, idField } of prepared) {
      if (idField === undefined) continue;
      const inTransaction = index.get(record.id);
      const latest =
        inTransaction === undefined ? batch.get(this.store.tokens, record.tenant_id, record.id) : inTransaction;
      if (latest && !isExpired(latest, now)) errors.add(idField, `a token with id ${record.id} already exists`);
    }
    errors.throwIfAny();
  }

  private transactionOf(ctx: TokenContext): TransactionRecord | undefined {
    return ctx.transactionId === undefined ? undefined : this.transactions.open(ctx.caller, ctx.transactionId);
  }

  /**
   * A token as this caller sees it: committed, overlaid by its own transaction's staged writes
   * (`staged`, indexed once when many tokens are looked up).
   */
  private visible(ctx: TokenContext, id: string, staged?: StagedIndex): TokenRecord | undefined {
    const inTransaction = staged ? staged.get(id) : stagedState(this.stagedOps(ctx), id);
    if (inTransaction !== undefined) return inTransaction ?? undefined;
    const record = this.store.tokens.get(ctx.caller.tenantId, id);
    return record && !isExpired(record, this.clock().getTime()) ? record : undefined;
  }

  private all(ctx: TokenContext): TokenRecord[] {
    const now = this.clock().getTime();
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
  private stagedIndex(ctx: TokenContext): StagedIndex {
    return indexStaged(this.stagedOps(ctx));
  }

  private stagedOps(ctx: TokenContext): StagedOp[] {
    return ctx.transactionId === undefined ? [] : this.transactions.open(ctx.caller, ctx.transactionId).staged;
  }

  private unseal(record: TokenRecord): Secret {
    try {
      return this.cipher.open<Secret>(record.secret, sealContext(record.tenant_id, record.id));
    } catch {
      throw new HttpError(
        500,
        `Token ${record.id} cannot be decrypted: its stored data is damaged, or the master key does not match the one it was written with.`,
      );
    }
  }

  /** A token's secret, or undefined when it does not decrypt (reported once per record). */
  private tryUnseal(record: TokenRecord): Secret | undefined {
    try {
      return this.cipher.open<Secret>(record.secret, sealContext(record.tenant_id, record.id));
    } catch {
      if (!this.reported.has(record)) {
        this.reported.add(record);
        this.report(
          `token ${record.id} of tenant ${record.tenant_id} cannot be decrypted (its stored data is damaged, or sealed under another master key); lists leave it out.`,
        );
      }
      return undefined;
    }
  }

  /** The wire token; `data` revealed, masked or left out as the caller's token:read access decides. */
  private present(caller: Caller, record: TokenRecord, secret: Secret, transform?: RuleTransform): Token {
    const effective = transform ?? readTransform(caller, record);
    const { secret: _sealed, ...token } = record;
    if (effective === 'reveal') return { ...token, data: secret.data };
    if (effective === 'mask' && secret.mask !== undefined) return { ...token, data: secret.mask };
    return token;
  }
}

/** Values are walked recursively: nesting is bounded so that a hostile document is a 400, not a stack overflow. */
function checkDepth(value: unknown): void {
  if (exceedsDepth(value, MAX_DEPTH)) throw new HttpError(400, `The JSON is nested deeper than ${MAX_DEPTH} levels.`);
}

/**
 * A tokenize's size, counted before any work and stopping at the first value past a limit: at
 * most TOKENIZE_LIMIT tokens, and TOKENIZE_VALUE_LIMIT values in all (the objects, arrays and
 * nulls around them too: a body of a million empty arrays creates no token, yet costs as much).
 */
function checkTokenizeSize(value: unknown): void {
  let tokens = 0;
  let values = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (++values > TOKENIZE_VALUE_LIMIT) {
      throw new HttpError(
        413,
        `A tokenize request holds at most ${TOKENIZE_VALUE_LIMIT.toLocaleString('en-US')} values (objects, arrays and nulls included); split it into several requests.`,
      );
    }
    if (node === null) continue;
    if (typeof node !== 'object' || isTokenSpec(node)) {
      if (++tokens > TOKENIZE_LIMIT) {
        throw new HttpError(
          413,
          `A tokenize request creates at most ${TOKENIZE_LIMIT.toLocaleString('en-US')} tokens; split it into several requests.`,
        );
      }
    } else if (Array.isArray(node)) {
      for (const child of node) stack.push(child);
    } else {
      for (const key in node) stack.push((node as Record<string, unknown>)[key]);
    }
  }
}

/** Runs a substitution, its output past `limit` a 413. */
function expanding<T>(limit: OutputLimit, substitution: () => T): T {
  try {
    return substitution();
  } catch (error) {
    if (error instanceof ExpansionLimitError) throw expansionTooLarge(limit);
    throw error;
  }
}

function expansionTooLarge(limit: OutputLimit): HttpError {
  return new HttpError(413, `Detokenized, this would be over ${limit.says} (each occurrence of a token counts).`);
}

/** The fewest bytes a token's data can take once substituted: a string as its text, anything else as JSON. */
function leastBytes(data: unknown): number {
  return Buffer.byteLength(typeof data === 'string' ? data : (JSON.stringify(data) ?? ''));
}

/** A caller without the permission anywhere is refused outright (an empty answer would hide that). */
function requireSomewhere(caller: Caller, permission: string): void {
  if (!holdsAnywhere(caller.application, permission)) {
    throw new HttpError(403, `This ${caller.application.type} Application lacks ${permission}.`);
  }
}

function readTransform(caller: Caller, record: TokenRecord): RuleTransform {
  const decision = evaluateTokenAccess(caller.application, 'token:read', record.containers);
  return decision.allowed ? decision.transform : 'redact';
}

function forbidden(caller: Caller, permission: string, record: TokenRecord): HttpError {
  return new HttpError(
    403,
    `This ${caller.application.type} Application lacks ${permission} on ${record.containers.join(', ')} (token ${record.id}).`,
  );
}

function sealContext(tenantId: string, id: string): string {
  return `token:${tenantId}:${id}`;
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
function indexStaged(staged: readonly StagedOp[]): StagedIndex {
  const index = new Map<string, TokenRecord | null>();
  for (const op of staged) {
    if (op.op === 'put') index.set(op.record.id, op.record);
    else index.set(op.id, null);
  }
  return index;
}

function isExpired(record: TokenRecord, now: number): boolean {
  return record.expires_at !== null && Date.parse(record.expires_at) <= now;
}

/**
 * An object with both `type` and `data` is a token to create, validated as POST /tokens would
 * (an unknown field or type is an error, never a reason to tokenize its leaves one by one).
 */
function isTokenSpec(node: unknown): boolean {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return false;
  return Object.hasOwn(node, 'type') && Object.hasOwn(node, 'data');
}

function fromEntries(entries: [string, unknown][]): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, value] of entries)
    Object.defineProperty(result, key, { value, enumerable: true, writable: true, configurable: true });
  return result;
}
