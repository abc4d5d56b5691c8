import { randomUUID } from 'node:crypto';
import { reactorSchema } from '../../api/schemas.js';
import type { InvokeReactorBody, ListQuery, Page, Reactor, ReactorBody, ReactorResponse, ReactorResult } from '../../api/types.js';
import { BODY_LIMIT_BYTES, BODY_LIMIT_LABEL, DETOKENIZE_LIMIT } from '../../api/limits.js';
import { PROBLEM_TYPES } from '../../api/problem.js';
import type { Tier } from '../../api/tiers.js';
import { MAX_DEPTH, exceedsDepth } from '../../lib/json-depth.js';
import { HttpError, notFound, problemOf } from '../errors.js';
import type { EmitEvent } from '../events.js';
import { checkedCustomResponse } from '../headers.js';
import { recordCodeVersion, type Instance, type Runtime } from '../runtime/index.js';
import type { Store } from '../store/store.js';
import type { ApplicationRecord, ReactorRecord, ReactorResultRecord } from '../store/records.js';
import { bodyValidator } from '../validation.js';
import { holdsAnywhere } from './access.js';
import { bindableApplication, requirePatchObject } from './bound-application.js';
import { toWire as applicationToWire, type Caller, type Clock, type CodeOwner } from './applications.js';
import type { Cipher } from '../crypto/cipher.js';
import { openConfiguration, sealConfiguration } from './configuration.js';
import { applyMergePatch } from './merge-patch.js';
import type { Outcome, ReactorResults } from './reactor-results.js';
import { filterItems, paginate } from './pagination.js';
import { svcHandler } from './svc-client.js';
import type { TokenContext, TokenService } from './tokens.js';
import { enterpriseOnly } from './transactions.js';

export const SYNC_TIMEOUT_MS = 30_000;
export const DEFAULT_ASYNC_TIMEOUT_MS = 10_000;

const checkReactor = bodyValidator<ReactorBody>(reactorSchema);

export interface ReactorServiceOptions {
  store: Store;
  cipher: Cipher;
  runtime: Runtime;
  tokens: TokenService;
  /** Asynchronous invocations: their results and webhook deliveries. */
  results: ReactorResults;
  tier: Tier;
  emit: EmitEvent;
  clock: Clock;
  /** The synchronous invocation timeout (30 s on the platform). */
  syncTimeoutMs?: number;
}

/**
 * Reactors: stored code run on demand in the sandbox. Code is loaded when it is saved, so a
 * reactor that does not load is refused then (422, with file:line:column), not at first invoke;
 * saving new code hot-swaps the running version.
 */
export class ReactorService {
  private readonly owners = new Map<string, CodeOwner>();
  private readonly configurations = new WeakMap<ReactorRecord, Record<string, string>>();

  constructor(private readonly options: ReactorServiceOptions) {}

  /** A reactor's name and tenant for the log, by id (the runtime knows code by id only). */
  ownerOf(id: string): CodeOwner | undefined {
    return this.owners.get(id);
  }

  async create(caller: Caller, body: ReactorBody): Promise<Reactor> {
    const application = bindableApplication(this.options.store, caller, body.application);
    const now = this.options.clock().toISOString();
    const id = randomUUID();
    const record: ReactorRecord = {
      id,
      tenant_id: caller.tenantId,
      name: body.name,
      code: body.code,
      configuration_sealed: sealConfiguration(this.options.cipher, 'reactor', { tenant_id: caller.tenantId, id }, body.configuration),
      application_id: application?.id ?? null,
      created_by: caller.application.id,
      created_at: now,
      modified_by: caller.application.id,
      modified_at: now,
    };
    await this.load(record);
    await this.options.store.reactors.put(record);
    return this.toWire(record);
  }

  list(caller: Caller, query: ListQuery): Page<Reactor> {
    const page = paginate(filterItems(this.options.store.reactors.list(caller.tenantId), query), query);
    return { ...page, data: page.data.map((record) => this.toWire(record)) };
  }

  get(caller: Caller, id: string): Reactor {
    return this.toWire(this.find(caller, id));
  }

  /** PUT: replaces every field; new code is loaded first and swapped in only if it loads. */
  async update(caller: Caller, id: string, body: ReactorBody): Promise<Reactor> {
    const current = this.find(caller, id);
    const application = bindableApplication(this.options.store, caller, body.application);
    const record: ReactorRecord = {
      ...current,
      name: body.name,
      code: body.code,
      configuration_sealed: sealConfiguration(this.options.cipher, 'reactor', current, body.configuration),
      application_id: application?.id ?? null,
      modified_by: caller.application.id,
      modified_at: this.options.clock().toISOString(),
    };
    await this.load(record);
    // Still there once loaded? A delete meanwhile must not be undone by this write.
    await this.options.store.write((batch) => {
      if (!batch.get(this.options.store.reactors, record.tenant_id, record.id)) throw notFound('reactor', id);
      batch.put(this.options.store.reactors, record);
    });
    return this.toWire(record);
  }

  /** PATCH: an RFC 7386 merge patch over the reactor's writable fields, checked like a PUT. */
  async patch(caller: Caller, id: string, patch: unknown): Promise<void> {
    requirePatchObject(patch, 'reactor');
    const current = this.find(caller, id);
    const writable: ReactorBody = {
      name: current.name,
      code: current.code,
      configuration: this.configurationOf(current),
      // An Application deleted since is dropped rather than refused: the patch is about other fields.
      ...(this.boundApplication(current) && { application: { id: current.application_id! } }),
    };
    await this.update(caller, id, checkReactor(applyMergePatch(writable, patch)));
  }

  async delete(caller: Caller, id: string): Promise<void> {
    const record = this.find(caller, id);
    if (!(await this.options.store.reactors.delete(caller.tenantId, record.id))) throw notFound('reactor', id);
    this.owners.delete(record.id);
    await this.options.runtime.unload(record.id);
  }

  /**
   * Invokes a reactor: `args` are detokenized (per-container token:use, at most 100 tokens) and
   * checked, the code runs with `{ args, configuration, svc }`, `raw` comes back as it is and the
   * `tokenize` block as `tokens`. With `callback_url` (Enterprise) it answers 202 at once and
   * delivers the result as a signed webhook.
   */
  async invoke(ctx: TokenContext, id: string, body: InvokeReactorBody, requestId: string): Promise<{ status: 200 | 202; body: unknown }> {
    const { caller } = ctx;
    if (!holdsAnywhere(caller.application, 'token:use')) {
      throw new HttpError(403, `This ${caller.application.type} Application lacks token:use, which invoking a reactor needs.`);
    }
    const reactor = this.find(caller, id);
    const asynchronous = body.callback_url != null;
    if ((body.callback_url != null || body.timeout_ms != null) && this.options.tier !== 'enterprise') {
      throw enterpriseOnly('Asynchronous invocation (callback_url, timeout_ms)');
    }
    if (body.timeout_ms != null && !asynchronous) {
      throw new HttpError(400, 'timeout_ms applies to asynchronous invocations only; add a callback_url.', { errors: { timeout_ms: ['needs callback_url'] } });
    }
    const args = this.options.tokens.detokenize(ctx, body.args ?? {}, DETOKENIZE_LIMIT);
    // Checked after detokenization: the code gets an object, within the payload limit.
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      throw new HttpError(400, 'args must be a JSON object once detokenized.', { errors: { args: ['must be an object'] } });
    }
    if (Buffer.byteLength(JSON.stringify(args)) > BODY_LIMIT_BYTES) {
      throw new HttpError(413, `The detokenized args are over the ${BODY_LIMIT_LABEL} limit.`);
    }
    const instance = await this.instanceOf(reactor);
    if (!asynchronous) {
      return { status: 200, body: await this.run(ctx, reactor, instance, args, this.options.syncTimeoutMs ?? SYNC_TIMEOUT_MS, requestId) };
    }
    const record = await this.options.results.open(caller.tenantId, reactor.id, body.callback_url!);
    this.options.results.track(this.runAsync(ctx, reactor, instance, args, body.timeout_ms ?? DEFAULT_ASYNC_TIMEOUT_MS, record));
    return { status: 202, body: { id: record.id, status: 'pending' } };
  }

  /** An asynchronous invocation's outcome, for polling. */
  result(caller: Caller, reactorId: string, requestId: string): ReactorResult {
    if (!holdsAnywhere(caller.application, 'token:use')) {
      throw new HttpError(403, `This ${caller.application.type} Application lacks token:use.`);
    }
    const reactor = this.find(caller, reactorId);
    const result = this.options.results.find(caller.tenantId, reactor.id, requestId.toLowerCase());
    if (!result) {
      const kept = `results are kept ${formatDuration(this.options.results.retentionMs)} after their delivery ends`;
      throw new HttpError(404, `No result ${requestId} for reactor ${reactorId} (${kept}).`);
    }
    return result;
  }

  /** Waits for the asynchronous runs under way, and the deliveries (which end at once once stopping). */
  async settle(): Promise<void> {
    await this.options.results.settle();
  }

  private async run(ctx: TokenContext, reactor: ReactorRecord, instance: Instance, args: unknown, timeoutMs: number, requestId: string): Promise<ReactorResponse> {
    const started = performance.now();
    const report = (status: number, error?: HttpError, stack?: string) =>
      this.options.emit({
        type: 'invocation',
        kind: 'reactor',
        name: reactor.name,
        id: reactor.id,
        tenantId: reactor.tenant_id,
        status,
        ms: Math.round((performance.now() - started) * 10) / 10,
        requestId,
        ...(error && { error: `${error.title}: ${error.detail}`, stack }),
      });
    try {
      const bound = this.boundApplication(reactor);
      const svc = bound ? svcHandler(this.options.tokens, { tenantId: reactor.tenant_id, application: bound }, ctx.transactionId) : null;
      const { value } = await instance.invoke({ args, configuration: this.configurationOf(reactor) }, { timeoutMs, requestId, svc });
      const response = await this.shape(ctx, reactor, value);
      report(200);
      return response;
    } catch (thrown) {
      const error = checkedCustomResponse(thrown, `Reactor ${reactor.name}`);
      report(error instanceof HttpError ? error.status : 500, error instanceof HttpError ? error : undefined, (thrown as { userStack?: string }).userStack);
      throw error;
    }
  }

  /** `{ raw, tokenize }` -> `{ raw, tokens }`: the tokenize block as POST /tokenize would, in the caller's transaction. */
  private async shape(ctx: TokenContext, reactor: ReactorRecord, value: unknown): Promise<ReactorResponse> {
    if (value === null) return {};
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw new HttpError(500, `Reactor ${reactor.name} must return an object with raw and/or tokenize (it returned ${Array.isArray(value) ? 'an array' : typeof value}).`, {
        title: 'Invalid reactor result',
        type: PROBLEM_TYPES.userCode,
      });
    }
    const { raw, tokenize } = value as { raw?: unknown; tokenize?: unknown };
    // Answered as JSON (and sealed when asynchronous): nesting is bounded as in a request, a 400 as there.
    if (exceedsDepth(raw, MAX_DEPTH)) {
      throw new HttpError(400, `Reactor ${reactor.name} returned raw nested deeper than ${MAX_DEPTH} levels.`, { title: 'Invalid reactor result', type: PROBLEM_TYPES.userCode });
    }
    const response: ReactorResponse = {};
    if (raw !== undefined) response.raw = raw;
    if (tokenize !== undefined && tokenize !== null) {
      const bound = this.boundApplication(reactor);
      const tokenCtx: TokenContext = bound ? { caller: { tenantId: reactor.tenant_id, application: bound }, transactionId: ctx.transactionId } : ctx;
      response.tokens = await this.options.tokens.tokenize(tokenCtx, tokenize);
    }
    return response;
  }

  /** Runs the code, stores how it ended, then delivers that (see ReactorResults). */
  private async runAsync(ctx: TokenContext, reactor: ReactorRecord, instance: Instance, args: unknown, timeoutMs: number, record: ReactorResultRecord): Promise<void> {
    let status: 'completed' | 'failed';
    let outcome: Outcome;
    try {
      outcome = await this.run(ctx, reactor, instance, args, timeoutMs, record.id);
      status = 'completed';
    } catch (error) {
      status = 'failed';
      outcome = { error: problemOf(error) };
    }
    await this.options.results.finish(record, status, outcome);
  }

  /** The running instance of a reactor's current code, loading it if need be (e.g. after a restart). */
  private async instanceOf(reactor: ReactorRecord): Promise<Instance> {
    const current = this.options.runtime.get(reactor.id);
    if (current && current.version === versionOf(reactor)) return current;
    return this.load(reactor);
  }

  private async load(reactor: ReactorRecord): Promise<Instance> {
    const instance = await this.options.runtime.load({
      id: reactor.id,
      version: versionOf(reactor),
      code: reactor.code,
      filename: fileNameOf(reactor.name),
      tenant: reactor.tenant_id,
      label: `reactor ${reactor.name}`,
    });
    // Named only once loaded: a refused update must not relabel the version still serving.
    this.owners.set(reactor.id, { name: reactor.name, tenantId: reactor.tenant_id });
    return instance;
  }

  private find(caller: Caller, id: string): ReactorRecord {
    const record = this.options.store.reactors.get(caller.tenantId, id.toLowerCase());
    if (!record) throw notFound('reactor', id);
    return record;
  }

  private boundApplication(reactor: ReactorRecord): ApplicationRecord | undefined {
    return reactor.application_id ? this.options.store.applications.get(reactor.tenant_id, reactor.application_id) : undefined;
  }

  /**
   * The configuration, opened once per record (records are replaced on every change): opening is
   * a decryption, and every invocation hands the configuration to the code. Frozen: it is shared.
   */
  private configurationOf(record: ReactorRecord): Record<string, string> {
    let configuration = this.configurations.get(record);
    if (!configuration) this.configurations.set(record, (configuration = Object.freeze(openConfiguration<Record<string, string>>(this.options.cipher, 'reactor', record))));
    return configuration;
  }

  private toWire(record: ReactorRecord): Reactor {
    const { id, tenant_id, name, code, configuration_sealed: _sealed, application_id, ...rest } = record;
    const application = application_id ? this.options.store.applications.get(record.tenant_id, application_id) : undefined;
    return { id, tenant_id, name, code, configuration: this.configurationOf(record), ...rest, application: application ? applicationToWire(application) : null };
  }
}

function versionOf(reactor: ReactorRecord): string {
  return recordCodeVersion(reactor, reactor.code, fileNameOf(reactor.name));
}

/** The file name stack traces and load errors show for a reactor. */
export function fileNameOf(name: string): string {
  return `${name.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^-+|-+$/g, '') || 'reactor'}.js`;
}

/** `24 h`, `90 min`, `1.5 s`: the retention, as the 404 of a dropped result says it. */
function formatDuration(ms: number): string {
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${ms / 1000} s`;
}
