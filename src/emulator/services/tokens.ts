import { DETOKENIZE_LIMIT } from '../../api/limits.js';
import type { RuleTransform } from '../../api/permissions.js';
import type { CreateTokenBody, Page, Token, TokenListQuery } from '../../api/types.js';
import { type ExpressionCount, substitute, substituteInJsonText, substituteInText } from '../../expressions/index.js';
import { MAX_DEPTH, exceedsDepth } from '../../lib/json-depth.js';
import type { Explanation } from '../../api/explanation.js';
import type { Cipher } from '../crypto/cipher.js';
import { FieldErrors, HttpError } from '../errors.js';
import type { Store } from '../store/store.js';
import type { TokenRecord } from '../store/records.js';
import { evaluateTokenAccess, holdsAnywhere, normalizeContainer } from './access.js';
import type { Caller } from './applications.js';
import { type Clock, type TenantClocks, tenantClocks } from './tenant-clocks.js';
import { CallContext } from './call-context.js';
import { LeakGuard } from '../leaks/guard.js';
import { filterItems, paginate } from './pagination.js';
import {
  notFoundExplanation,
  tooManyExplanation,
  unusableExplanation,
  withExpressions,
} from './detokenize-explanation.js';
import { PermissionDenied } from './permission-denied.js';
import { type Prepared, type Secret, sealContext, TokenCreator } from './token-creation.js';
import {
  type BodyExpansion,
  checkExpressionCount,
  expanding,
  expansionTooLarge,
  expressionsIn,
  leastBytes,
  type OutputLimit,
  PAYLOAD_LIMIT,
} from './token-expansion.js';
import { indexStaged, isExpired, type StagedIndex, type TokenContext, TokenView } from './token-view.js';
import { checkTokenizeSize, planTokenize, prepareInSlices } from './tokenize-batch.js';
import type { TransactionService } from './transactions.js';

export type { BodyExpansion, OutputLimit } from './token-expansion.js';
export { expressionsIn } from './token-expansion.js';
export type { TokenContext } from './token-view.js';

/**
 * Tokens: create, read, list, delete, tokenize and detokenize, each governed by the caller's
 * permissions and access rules (first matching rule by priority decides; plain permissions apply
 * everywhere with the implicit transform). Token data is sealed before it reaches the store.
 */
export class TokenService {
  /** The tokens a caller sees, its transaction's staged writes over the committed ones. */
  private readonly view: TokenView;
  /** Validation, sealing and the one write of the tokens a request makes. */
  private readonly creator: TokenCreator;
  /** Each tenant's clock: what expiry reads, and the time user code running for a tenant reads (invocation.ts). */
  readonly clocks: TenantClocks;
  /**
   * The leak guard watching where the plaintext revealed here goes (emulator/leaks; off until the
   * emulator gives its own): beside the tokens, as every call that detokenizes holds this service.
   */
  leaks = new LeakGuard('off', [], () => {});

  constructor(
    private readonly store: Store,
    private readonly cipher: Cipher,
    private readonly transactions: TransactionService,
    clock?: Clock | TenantClocks,
    /** Hears of tokens left out of a list because they cannot be decrypted (their id, never data). */
    private readonly report: (message: string) => void = () => {},
  ) {
    this.clocks = tenantClocks(clock);
    this.view = new TokenView(store, transactions, this.clocks);
    this.creator = new TokenCreator(store, cipher, transactions, this.clocks, this.view);
  }

  /** Records already reported as unreadable: one report per stored record, however often it is listed. */
  private readonly reported = new WeakSet<TokenRecord>();

  /**
   * The context of one call of user code made by `ctx` (call-context.ts): its caller must hold
   * token:use somewhere, checked here once for the whole call (a 403 saying what `needs` it).
   */
  callContext(ctx: TokenContext, needs: string): CallContext {
    requireSomewhere(ctx.caller, 'token:use', needs);
    return new CallContext(ctx.caller, ctx.transactionId, (call) => this.view.stagedIndex(call));
  }

  async create(ctx: TokenContext, body: CreateTokenBody): Promise<Token> {
    const transaction = this.view.transactionOf(ctx);
    const errors = new FieldErrors();
    const prepared = this.creator.prepare(ctx, body, errors, '', new Set(), transaction);
    errors.throwIfAny();
    this.creator.checkCreate(ctx.caller, [prepared!]);
    await this.creator.write(transaction, [prepared!]);
    return this.present(ctx.caller, prepared!.record, prepared!.secret);
  }

  get(ctx: TokenContext, id: string): Token {
    const record = this.view.visible(ctx, id);
    if (!record) throw new HttpError(404, `No token with id ${id}.`);
    const decision = evaluateTokenAccess(ctx.caller.application, 'token:read', record.containers);
    if (!decision.allowed) throw forbidden(ctx.caller, 'token:read', record);
    return this.present(ctx.caller, record, this.unseal(record), decision.transform);
  }

  /** The containers of a token the caller's tenant holds (for an explanation), or undefined. */
  containersOf(ctx: TokenContext, id: string): readonly string[] | undefined {
    return this.view.visible(ctx, id)?.containers;
  }

  /** Lists the tokens the caller may read; the others are left out, not refused. */
  list(ctx: TokenContext, query: TokenListQuery): Page<Token> {
    requireSomewhere(ctx.caller, 'token:read');
    // A path prefix: `/pci` means `/pci/` and what is below it, never `/pcix/`.
    const container =
      query.container === undefined
        ? undefined
        : normalizeContainer(query.container.endsWith('/') ? query.container : `${query.container}/`);
    const readable = this.view.all(ctx).flatMap((record) => {
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
    const transaction = this.view.transactionOf(ctx);
    const record = this.view.visible(ctx, id);
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
        !isExpired(latest, this.clocks.ms(latest.tenant_id)) &&
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
    const transaction = this.view.transactionOf(ctx);
    const errors = new FieldErrors();
    const ids = new Set<string>();
    let made: (Prepared | undefined)[] = [];
    const { sites, build } = planTokenize(value, {
      token: (site) => this.present(ctx.caller, made[site]!.record, made[site]!.secret),
      id: (site) => made[site]!.record.id,
    });
    // The first slice reads the staged writes of the transaction just opened; later ones (after a
    // pause, when other requests may have written) open it again.
    let opened = true;
    made = await prepareInSlices(
      sites,
      () => {
        const staged = opened ? indexStaged(transaction?.staged ?? []) : this.view.stagedIndex(ctx);
        opened = false;
        return staged;
      },
      ({ body, at }, staged) => this.creator.prepare(ctx, body, errors, at, ids, transaction, staged),
    );
    errors.throwIfAny();
    const prepared = made as Prepared[];
    this.creator.checkCreate(ctx.caller, prepared);
    await this.creator.write(transaction, prepared);
    return build();
  }

  /**
   * Replaces every `{{ token_id }}` in `value` with the token's data. Each token needs `token:use`
   * on its container (403); an unknown token is a 400 naming it; more than `limit` tokens is a 400;
   * a result over the payload limit (each occurrence counts) is a 413, refused before it is built.
   * In a call's context (CallContext) the caller's token:use and transaction were resolved already.
   */
  detokenize(ctx: TokenContext, value: unknown, limit = DETOKENIZE_LIMIT): unknown {
    checkDepth(value);
    const data = this.resolveExpressions(ctx, expressionsIn(value, limit), limit, PAYLOAD_LIMIT, value);
    return data.size === 0 ? value : expanding(PAYLOAD_LIMIT, () => substitute(value, data, PAYLOAD_LIMIT.bytes));
  }

  /**
   * Detokenizes a text body (a proxy's, not JSON): a text that is exactly one expression becomes
   * the data as text. Measured in UTF-8 bytes as sent, at most `body.limitBytes`.
   */
  detokenizeText(ctx: TokenContext, text: string, body: BodyExpansion = {}): string {
    const limit = body.limit ?? PAYLOAD_LIMIT;
    const found = body.found ?? expressionsIn(text);
    const data = this.resolveExpressions(ctx, found, DETOKENIZE_LIMIT, limit, text);
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
    const data = this.resolveExpressions(ctx, found, DETOKENIZE_LIMIT, limit, parsed);
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
    /** The value or text detokenized: its expressions are listed when a refusal is explained. */
    source: unknown,
  ): Map<string, unknown> {
    const call = ctx instanceof CallContext ? ctx : undefined;
    if (!call) requireSomewhere(ctx.caller, 'token:use');
    try {
      checkExpressionCount(found, limit);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      const explanation = tooManyExplanation(ctx.caller.application, error.detail);
      throw new HttpError(error.status, error.detail, { extensions: { explanation } });
    }
    const data = new Map<string, unknown>();
    const staged = call ? call.staged() : this.view.stagedIndex(ctx);
    const application = ctx.caller.application;
    let bytes = 0;
    for (const id of found.ids) {
      const record = this.view.visible(ctx, id, staged);
      if (!record)
        throw new HttpError(400, `Token ${id} in a detokenization expression does not exist.`, {
          errors: { [id]: ['no such token'] },
          title: 'Unknown token',
          extensions: { explanation: this.explained(ctx, staged, source, notFoundExplanation(application, id)) },
        });
      const decision = evaluateTokenAccess(application, 'token:use', record.containers);
      if (!decision.allowed) {
        const denied = forbidden(ctx.caller, 'token:use', record);
        this.explained(ctx, staged, source, denied.explanation);
        throw denied;
      }
      // The rule's transform applies to use as to read: a masked grant detokenizes to the mask.
      const secret = this.unseal(record);
      let used: unknown;
      if (decision.transform === 'reveal') used = secret.data;
      else if (decision.transform === 'mask' && secret.mask !== undefined) used = secret.mask;
      else {
        const how = decision.transform === 'mask' ? 'masked and has no mask' : 'redacted';
        const detail = `Token ${id} is ${how} for this ${application.type} Application; detokenizing it needs a reveal rule.`;
        const why = `token ${id} is ${how} for this Application (needs a reveal rule)`;
        throw new HttpError(403, detail, {
          extensions: {
            explanation: this.explained(ctx, staged, source, unusableExplanation(application, record, why)),
          },
        });
      }
      bytes += leastBytes(used);
      if (bytes > output.bytes) throw expansionTooLarge(output);
      data.set(id, used);
      // What the call revealed, for the leak guard (a mask is what the caller may see: not a secret).
      if (ctx.secrets && decision.transform === 'reveal') ctx.secrets.add(used, id);
    }
    return data;
  }

  /** A refusal explains every expression of the source (detokenize-explanation.ts), evaluated again. */
  private explained(ctx: TokenContext, staged: StagedIndex, source: unknown, explanation: Explanation): Explanation {
    return withExpressions(explanation, ctx.caller.application, source, {
      find: (id) => this.view.visible(ctx, id, staged),
      unseal: (record) => this.unseal(record),
    });
  }

  /** Deletes expired tokens; returns how many. */
  async sweep(): Promise<number> {
    const now = this.clocks.snapshot();
    const expired = [...this.store.tokens.everything()].filter((record) => isExpired(record, now(record.tenant_id)));
    if (expired.length === 0) return 0;
    return this.store.write((batch) => {
      let removed = 0;
      for (const record of expired) {
        const latest = batch.get(this.store.tokens, record.tenant_id, record.id);
        if (
          latest &&
          isExpired(latest, now(latest.tenant_id)) &&
          batch.delete(this.store.tokens, record.tenant_id, record.id)
        )
          removed++;
      }
      return removed;
    });
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

/** A caller without the permission anywhere is refused outright (an empty answer would hide that). */
function requireSomewhere(caller: Caller, permission: string, needs?: string): void {
  if (!holdsAnywhere(caller.application, permission)) {
    throw new PermissionDenied({ permission }, caller.application, needs);
  }
}

function readTransform(caller: Caller, record: TokenRecord): RuleTransform {
  const decision = evaluateTokenAccess(caller.application, 'token:read', record.containers);
  return decision.allowed ? decision.transform : 'redact';
}

function forbidden(caller: Caller, permission: string, record: TokenRecord): PermissionDenied {
  return new PermissionDenied({ permission, containers: record.containers, token: record.id }, caller.application);
}
