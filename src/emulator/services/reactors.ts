import { randomUUID } from 'node:crypto';
import { reactorSchema } from '../../api/schemas.js';
import type { InvokeReactorBody, ListQuery, Page, Reactor, ReactorBody, ReactorResponse, ReactorResult } from '../../api/types.js';
import type { Problem } from '../../api/problem.js';
import { HttpError, notFound } from '../errors.js';
import type { EmitEvent } from '../events.js';
import { recordCodeVersion, type Instance, type Runtime } from '../runtime/index.js';
import type { Store } from '../store/store.js';
import type { ApplicationRecord, ReactorRecord, ReactorResultRecord } from '../store/records.js';
import { bodyValidator } from '../validation.js';
import { holdsAnywhere } from './access.js';
import { bindableApplication, requirePatchObject } from './bound-application.js';
import { toWire as applicationToWire, type Caller, type Clock } from './applications.js';
import type { Cipher, Sealed } from './cipher.js';
import { applyMergePatch } from './merge-patch.js';
import { filterItems, paginate } from './pagination.js';
import { svcHandler } from './svc-client.js';
import { DETOKENIZE_LIMIT, type TokenContext, type TokenService } from './tokens.js';
import { enterpriseOnly, type Tier } from './transactions.js';
import type { WebhookService } from './webhooks.js';

export const SYNC_TIMEOUT_MS = 30_000;
export const DEFAULT_ASYNC_TIMEOUT_MS = 10_000;
const MAX_ARGS_BYTES = 5 * 1024 * 1024;

const checkReactor = bodyValidator<ReactorBody>(reactorSchema);

export interface ReactorServiceOptions {
  store: Store;
  cipher: Cipher;
  runtime: Runtime;
  tokens: TokenService;
  webhooks: WebhookService;
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
  private readonly tasks = new Set<Promise<void>>();
  private readonly names = new Map<string, string>();

  constructor(private readonly options: ReactorServiceOptions) {}

  /** A reactor's name for the log, by id (the runtime knows code by id only). */
  nameOf(id: string): string | undefined {
    return this.names.get(id);
  }

  async create(caller: Caller, body: ReactorBody): Promise<Reactor> {
    const application = bindableApplication(this.options.store, caller, body.application);
    const now = this.options.clock().toISOString();
    const record: ReactorRecord = {
      id: randomUUID(),
      tenant_id: caller.tenantId,
      name: body.name,
      code: body.code,
      configuration: body.configuration,
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
      configuration: body.configuration,
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
      configuration: current.configuration,
      // An Application deleted since is dropped rather than refused: the patch is about other fields.
      ...(this.boundApplication(current) && { application: { id: current.application_id! } }),
    };
    await this.update(caller, id, checkReactor(applyMergePatch(writable, patch)));
  }

  async delete(caller: Caller, id: string): Promise<void> {
    const record = this.find(caller, id);
    if (!(await this.options.store.reactors.delete(caller.tenantId, record.id))) throw notFound('reactor', id);
    this.names.delete(record.id);
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
      throw new HttpError(400, 'timeout_ms applies to asynchronous invocations only; add a callback_url.', { timeout_ms: ['needs callback_url'] });
    }
    const args = this.options.tokens.detokenize(ctx, body.args ?? {}, DETOKENIZE_LIMIT);
    // Checked after detokenization: the code gets an object, within the payload limit.
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      throw new HttpError(400, 'args must be a JSON object once detokenized.', { args: ['must be an object'] });
    }
    if (Buffer.byteLength(JSON.stringify(args)) > MAX_ARGS_BYTES) {
      throw new HttpError(413, 'The detokenized args are over the 5 MB limit.');
    }
    const instance = await this.instanceOf(reactor);
    if (!asynchronous) {
      return { status: 200, body: await this.run(ctx, reactor, instance, args, this.options.syncTimeoutMs ?? SYNC_TIMEOUT_MS, requestId) };
    }
    const asyncId = randomUUID();
    const now = this.options.clock().toISOString();
    const record: ReactorResultRecord = {
      id: asyncId,
      tenant_id: caller.tenantId,
      reactor_id: reactor.id,
      status: 'pending',
      started_at: now,
      created_at: now,
      callback_url: body.callback_url!,
      deliveries: [],
    };
    await this.options.store.results.put(record);
    this.track(this.runAsync(ctx, reactor, instance, args, body.timeout_ms ?? DEFAULT_ASYNC_TIMEOUT_MS, record));
    return { status: 202, body: { id: asyncId, status: 'pending' } };
  }

  /** An asynchronous invocation's outcome, for polling. */
  result(caller: Caller, reactorId: string, requestId: string): ReactorResult {
    if (!holdsAnywhere(caller.application, 'token:use')) {
      throw new HttpError(403, `This ${caller.application.type} Application lacks token:use.`);
    }
    const reactor = this.find(caller, reactorId);
    const record = this.options.store.results.get(caller.tenantId, requestId.toLowerCase());
    if (!record || record.reactor_id !== reactor.id) throw new HttpError(404, `No result ${requestId} for reactor ${reactorId}.`);
    return this.resultPayload(record);
  }

  /** Results left pending by a stop cannot complete any more: they are failed on start. */
  async failInterrupted(): Promise<void> {
    const now = this.options.clock().toISOString();
    const pending = [...this.options.store.results.everything()].filter((record) => record.status === 'pending');
    if (pending.length === 0) return;
    await this.options.store.write((batch) => {
      for (const record of pending) {
        batch.put(this.options.store.results, {
          ...record,
          status: 'failed',
          completed_at: now,
          outcome: this.sealOutcome(record, {
            error: { type: 'urn:svc:problem:internal', title: 'Interrupted', status: 500, detail: 'The emulator stopped before this invocation finished.' },
          }),
        });
      }
    });
  }

  /**
   * Replaces every stored outcome by an error saying it was lost: for a store whose master key
   * was lost, where outcomes sealed under it cannot be opened. Returns how many there were.
   */
  async forgetOutcomes(): Promise<number> {
    const sealed = [...this.options.store.results.everything()].filter((record) => record.outcome !== undefined);
    if (sealed.length === 0) return 0;
    await this.options.store.write((batch) => {
      for (const record of sealed) {
        batch.put(this.options.store.results, {
          ...record,
          outcome: this.sealOutcome(record, {
            error: { type: 'urn:svc:problem:internal', title: 'Outcome lost', status: 500, detail: 'This result was sealed with a master key that is gone.' },
          }),
        });
      }
    });
    return sealed.length;
  }

  /** Waits for asynchronous invocations under way (their code and first delivery attempt). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.tasks]);
  }

  private async run(ctx: TokenContext, reactor: ReactorRecord, instance: Instance, args: unknown, timeoutMs: number, requestId: string): Promise<ReactorResponse> {
    const started = performance.now();
    const report = (status: number, error?: HttpError) =>
      this.options.emit({
        type: 'invocation',
        kind: 'reactor',
        name: reactor.name,
        id: reactor.id,
        status,
        ms: Math.round((performance.now() - started) * 10) / 10,
        requestId,
        ...(error && { error: `${error.title}: ${error.detail}`, stack: (error as { userStack?: string }).userStack }),
      });
    try {
      const bound = this.boundApplication(reactor);
      const svc = bound ? svcHandler(this.options.tokens, { tenantId: reactor.tenant_id, application: bound }, ctx.transactionId) : null;
      const { value } = await instance.invoke({ args, configuration: reactor.configuration }, { timeoutMs, requestId, svc });
      const response = await this.shape(ctx, reactor, value);
      report(200);
      return response;
    } catch (error) {
      report(error instanceof HttpError ? error.status : 500, error instanceof HttpError ? error : undefined);
      throw error;
    }
  }

  /** `{ raw, tokenize }` -> `{ raw, tokens }`: the tokenize block as POST /tokenize would, in the caller's transaction. */
  private async shape(ctx: TokenContext, reactor: ReactorRecord, value: unknown): Promise<ReactorResponse> {
    if (value === null) return {};
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw new HttpError(500, `Reactor ${reactor.name} must return an object with raw and/or tokenize (it returned ${Array.isArray(value) ? 'an array' : typeof value}).`, undefined, 'Invalid reactor result');
    }
    const { raw, tokenize } = value as { raw?: unknown; tokenize?: unknown };
    const response: ReactorResponse = {};
    if (raw !== undefined) response.raw = raw;
    if (tokenize !== undefined && tokenize !== null) {
      const bound = this.boundApplication(reactor);
      const tokenCtx: TokenContext = bound ? { caller: { tenantId: reactor.tenant_id, application: bound }, transactionId: ctx.transactionId } : ctx;
      response.tokens = await this.options.tokens.tokenize(tokenCtx, tokenize);
    }
    return response;
  }

  private async runAsync(ctx: TokenContext, reactor: ReactorRecord, instance: Instance, args: unknown, timeoutMs: number, record: ReactorResultRecord): Promise<void> {
    let status: ReactorResult['status'];
    let outcome: Outcome;
    try {
      status = 'completed';
      outcome = await this.run(ctx, reactor, instance, args, timeoutMs, record.id);
    } catch (error) {
      status = 'failed';
      outcome = { error: problemOf(error) };
    }
    const done: ReactorResultRecord = { ...record, status, outcome: this.sealOutcome(record, outcome), completed_at: this.options.clock().toISOString() };
    await this.options.store.results.put(done);
    const deliveries: ReactorResultRecord['deliveries'] = [];
    // The log names where the result went, not what its query string may carry.
    const where = record.callback_url.split('?')[0]!;
    await this.options.webhooks.deliver(reactor.tenant_id, record.callback_url, this.resultPayload(done), (attempt) => {
      deliveries.push({ ...attempt, at: this.options.clock().toISOString() });
      this.options.emit({ type: 'webhook', reactorId: reactor.id, requestId: record.id, url: where, ...attempt });
      const latest = this.options.store.results.get(record.tenant_id, record.id);
      if (latest) this.options.store.results.put({ ...latest, deliveries: [...deliveries] }).catch((error: unknown) => this.reportStoreError(error));
    });
  }

  private reportStoreError(error: unknown): void {
    this.options.emit({ type: 'error', message: `recording a webhook delivery failed: ${(error as Error).message}`, stack: (error as Error).stack });
  }

  /** A result's outcome is sealed like token data: it may hold what the reactor detokenized. */
  private sealOutcome(record: ReactorResultRecord, outcome: Outcome): Sealed {
    return this.options.cipher.seal(outcome, `result:${record.tenant_id}:${record.id}`);
  }

  private resultPayload(record: ReactorResultRecord): ReactorResult {
    const { id, reactor_id, status, started_at, completed_at } = record;
    const { raw, tokens, error } = record.outcome ? this.options.cipher.open<Outcome>(record.outcome, `result:${record.tenant_id}:${record.id}`) : ({} as Outcome);
    return {
      id,
      reactor_id,
      status,
      ...(raw !== undefined && { raw }),
      ...(tokens !== undefined && { tokens }),
      ...(error !== undefined && { error }),
      started_at,
      ...(completed_at !== undefined && { completed_at }),
    };
  }

  private track(task: Promise<void>): void {
    const tracked = task.catch((error: unknown) => {
      this.options.emit({ type: 'error', message: `asynchronous invocation failed: ${(error as Error).message}`, stack: (error as Error).stack });
    });
    this.tasks.add(tracked);
    void tracked.finally(() => this.tasks.delete(tracked));
  }

  /** The running instance of a reactor's current code, loading it if need be (e.g. after a restart). */
  private async instanceOf(reactor: ReactorRecord): Promise<Instance> {
    const current = this.options.runtime.get(reactor.id);
    if (current && current.version === versionOf(reactor)) return current;
    return this.load(reactor);
  }

  private async load(reactor: ReactorRecord): Promise<Instance> {
    const instance = await this.options.runtime.load({ id: reactor.id, version: versionOf(reactor), code: reactor.code, filename: fileNameOf(reactor.name) });
    // Named only once loaded: a refused update must not relabel the version still serving.
    this.names.set(reactor.id, reactor.name);
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

  private toWire(record: ReactorRecord): Reactor {
    const { application_id, ...rest } = record;
    const application = application_id ? this.options.store.applications.get(record.tenant_id, application_id) : undefined;
    return { ...rest, application: application ? applicationToWire(application) : null };
  }
}

function versionOf(reactor: ReactorRecord): string {
  return recordCodeVersion(reactor, reactor.code, fileNameOf(reactor.name));
}

/** The file name stack traces and load errors show for a reactor. */
export function fileNameOf(name: string): string {
  return `${name.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^-+|-+$/g, '') || 'reactor'}.js`;
}

interface Outcome {
  raw?: unknown;
  tokens?: unknown;
  error?: Problem;
}

function problemOf(error: unknown): Problem {
  if (error instanceof HttpError) return { type: error.type, title: error.title, status: error.status, detail: error.detail };
  return { type: 'urn:svc:problem:internal', title: 'Internal server error', status: 500, detail: (error as Error).message };
}
