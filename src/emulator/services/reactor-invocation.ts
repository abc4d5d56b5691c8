import { randomUUID } from 'node:crypto';
import { BODY_LIMIT_BYTES, BODY_LIMIT_LABEL, DETOKENIZE_LIMIT } from '../../api/limits.js';
import { PROBLEM_TYPES, type Problem } from '../../api/problem.js';
import type { Tier } from '../../api/tiers.js';
import type { InvokeReactorBody, ReactorResponse, ReactorResult } from '../../api/types.js';
import { MAX_DEPTH, exceedsDepth } from '../../lib/json-depth.js';
import { HttpError, problemOf } from '../errors.js';
import type { EmitEvent } from '../events.js';
import { type Instance, JsonText } from '../runtime/index.js';
import type { ApplicationRecord, ReactorRecord, ReactorResultRecord } from '../store/records.js';
import type { Caller } from './applications.js';
import type { CallContext } from './call-context.js';
import type { LeakCall } from '../leaks/guard.js';
import { type CodeCall, invokeCode } from './invocation.js';
import { lacking, PermissionDenied } from './permission-denied.js';
import type { Outcome, ReactorResults } from './reactor-results.js';
import type { TokenContext, TokenService } from './tokens.js';
import { enterpriseOnly } from './transactions.js';

export const SYNC_TIMEOUT_MS = 30_000;
export const DEFAULT_ASYNC_TIMEOUT_MS = 10_000;

/** What running a reactor needs of the emulator; the reactor service gives its own lookups. */
export interface InvocationDeps {
  tokens: TokenService;
  /** Asynchronous invocations: their results and webhook deliveries. */
  results: ReactorResults;
  tier: Tier;
  emit: EmitEvent;
  /** The synchronous invocation timeout (30 s on the platform). */
  syncTimeoutMs?: number | undefined;
  /**
   * The running instance of a reactor's current code, loading it if need be (e.g. after a restart):
   * at once when it runs already, so that a warm call takes no turn of the microtask queue for it.
   */
  instanceOf(reactor: ReactorRecord): Instance | Promise<Instance>;
  /** The Application whose permissions `req.svc` and the `tokenize` block get, if any. */
  boundApplication(reactor: ReactorRecord): ApplicationRecord | undefined;
  configurationOf(reactor: ReactorRecord): Record<string, string>;
}

/**
 * Running a reactor: `args` detokenized and checked, the code run in the sandbox, its answer
 * shaped (`raw`, and the `tokenize` block as `tokens`); or, with `callback_url` (Enterprise), run
 * in the background with its outcome stored and delivered as a signed webhook.
 */
export class ReactorInvocations {
  /** Who watches synchronous calls pass (`svc replay`'s capture, emulator/replay). */
  observer: ReactorObserver | undefined;

  constructor(private readonly deps: InvocationDeps) {}

  /**
   * `args` are detokenized (per-container token:use, at most 100 tokens) and checked, the code runs
   * with `{ args, configuration, svc }`; 200 with the response, or 202 at once when asynchronous.
   * `rerun`: a re-run of a kept call (`svc replay`): its `req.svc` writes nothing, nor is its
   * tokenize block tokenized (the response has its `raw` only).
   */
  invoke(
    ctx: CallContext,
    reactor: ReactorRecord,
    body: InvokeReactorBody,
    requestId: string,
    options: { rerun?: boolean } = {},
  ): Promise<{ status: 200 | 202; body: unknown }> {
    const observer = body.callback_url == null ? this.observer : undefined;
    const rerun = options.rerun === true;
    if (!observer) return this.start(ctx, reactor, body, requestId, rerun);
    observer.began(requestId, ctx, reactor, body.args ?? {});
    return this.start(ctx, reactor, body, requestId, rerun).then(
      (answer) => {
        observer.ended(requestId);
        return answer;
      },
      (error: unknown) => {
        observer.ended(requestId, error);
        throw error;
      },
    );
  }

  private async start(
    ctx: CallContext,
    reactor: ReactorRecord,
    body: InvokeReactorBody,
    requestId: string,
    rerun: boolean,
  ): Promise<{ status: 200 | 202; body: unknown }> {
    const asynchronous = body.callback_url != null;
    if ((body.callback_url != null || body.timeout_ms != null) && this.deps.tier !== 'enterprise') {
      throw enterpriseOnly('Asynchronous invocation (callback_url, timeout_ms)');
    }
    if (body.timeout_ms != null && !asynchronous) {
      throw new HttpError(400, 'timeout_ms applies to asynchronous invocations only; add a callback_url.', {
        errors: { timeout_ms: ['needs callback_url'] },
      });
    }
    const args = this.deps.tokens.detokenize(ctx, body.args ?? {}, DETOKENIZE_LIMIT);
    // Checked after detokenization: the code gets an object, within the payload limit.
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      throw new HttpError(400, 'args must be a JSON object once detokenized.', {
        errors: { args: ['must be an object'] },
      });
    }
    // Serialised once: measured as it is sent (only text that could be over the limit, at 3 bytes
    // a UTF-16 unit at most, is counted), then put into the invoke frame as it is.
    const json = JSON.stringify(args);
    if (json.length * 3 > BODY_LIMIT_BYTES && Buffer.byteLength(json) > BODY_LIMIT_BYTES) {
      throw new HttpError(413, `The detokenized args are over the ${BODY_LIMIT_LABEL} limit.`);
    }
    const found = this.deps.instanceOf(reactor);
    const instance = found instanceof Promise ? await found : found;
    if (!asynchronous) {
      const code = this.codeCall(ctx, reactor, instance, requestId, this.deps.syncTimeoutMs ?? SYNC_TIMEOUT_MS);
      if (rerun) code.rerun = true;
      return { status: 200, body: await this.run(ctx, code, new JsonText(json)) };
    }
    const record = await this.deps.results.open(ctx.caller.tenantId, reactor.id, body.callback_url!);
    const code = this.codeCall(ctx, reactor, instance, record.id, body.timeout_ms ?? DEFAULT_ASYNC_TIMEOUT_MS);
    this.deps.results.track(this.runAsync(ctx, code, new JsonText(json), record), ctx.caller.tenantId);
    return { status: 202, body: { id: record.id, status: 'pending' } };
  }

  /** An asynchronous invocation's outcome, for polling (`asked`: the reactor id as the caller wrote it). */
  result(caller: Caller, reactor: ReactorRecord, asked: string, requestId: string): ReactorResult {
    const result = this.deps.results.find(caller.tenantId, reactor.id, requestId.toLowerCase());
    if (!result) {
      const kept = `results are kept ${formatDuration(this.deps.results.retentionMs)} after their delivery ends`;
      throw new HttpError(404, `No result ${requestId} for reactor ${asked} (${kept}).`);
    }
    return result;
  }

  /**
   * The code's side of the call (invocation.ts), resolved once and handed down: its loaded version,
   * configuration and bound Application (which `req.svc` and the tokenize block both act under).
   */
  private codeCall(
    ctx: CallContext,
    reactor: ReactorRecord,
    instance: Instance,
    requestId: string,
    timeoutMs: number,
  ): CodeCall {
    return {
      kind: 'reactor',
      name: reactor.name,
      id: reactor.id,
      tenantId: reactor.tenant_id,
      owner: `Reactor ${reactor.name}`,
      svcOwner: `reactor ${reactor.name}`,
      instance,
      configuration: this.deps.configurationOf(reactor),
      bound: this.deps.boundApplication(reactor),
      boundNow: () => this.deps.boundApplication(reactor),
      transactionId: ctx.transactionId,
      requestId,
      watchId: randomUUID(),
      timeoutMs,
      caller: ctx.caller.application,
    };
  }

  private run(ctx: CallContext, code: CodeCall, args: JsonText): Promise<ReactorResponse> {
    const { leaks } = this.deps.tokens;
    // Watched while it runs (and a while after: its last console lines) under its request id, in
    // every mode: events and recordings are redacted of its plaintext even with the checks off.
    const watched = reactorLeakCall(ctx, code);
    leaks.open(watched);
    // What it is revealed stays looked for while its code version lives (its module state may keep it).
    leaks.own(watched, code.instance.id, code.instance.version);
    return invokeCode(this.deps, code, args, (value) => this.shape(ctx, code, value)).then(
      (response) => {
        leaks.close(watched);
        leaks.settle(watched);
        return response;
      },
      (error: unknown) => {
        leaks.close(watched);
        leaks.settle(watched);
        throw error;
      },
    );
  }

  /**
   * `{ raw, tokenize }` -> `{ raw, tokens }`: the tokenize block as POST /tokenize would, in the
   * caller's transaction. A result without one is shaped at once (no promise to wait a turn for).
   */
  private shape(ctx: CallContext, code: CodeCall, value: unknown): ReactorResponse | Promise<ReactorResponse> {
    this.observer?.returned(code.requestId, value);
    if (value === null) return {};
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw new HttpError(
        500,
        `Reactor ${code.name} must return an object with raw and/or tokenize (it returned ${Array.isArray(value) ? 'an array' : typeof value}).`,
        {
          title: 'Invalid reactor result',
          type: PROBLEM_TYPES.userCode,
        },
      );
    }
    const { raw, tokenize } = value as { raw?: unknown; tokenize?: unknown };
    // Answered as JSON (and sealed when asynchronous): nesting is bounded as in a request, a 400 as there.
    if (exceedsDepth(raw, MAX_DEPTH)) {
      throw new HttpError(400, `Reactor ${code.name} returned raw nested deeper than ${MAX_DEPTH} levels.`, {
        title: 'Invalid reactor result',
        type: PROBLEM_TYPES.userCode,
      });
    }
    const response: ReactorResponse = {};
    if (raw !== undefined) response.raw = raw;
    // The raw result is answered, stored and delivered as it is: checked once here (the mode decides).
    const watched = raw === undefined ? undefined : this.deps.tokens.leaks.callOf(code.watchId);
    if (watched) this.deps.tokens.leaks.check(watched, 'raw', JSON.stringify(raw));
    if (tokenize === undefined || tokenize === null || code.rerun) return response;
    // Under the bound Application as the call found it; the transaction as it is now (the code may
    // have written in it through req.svc meanwhile).
    const { bound } = code;
    const tokenCtx: TokenContext = bound
      ? { caller: { tenantId: code.tenantId, application: bound }, transactionId: ctx.transactionId }
      : ctx;
    return this.deps.tokens.tokenize(tokenCtx, tokenize).then(
      (tokens) => ({ ...response, tokens }),
      (error: unknown) => {
        throw tokenizeRefused(error, code.name, bound, response.raw);
      },
    );
  }

  /** Runs the code, stores how it ended, then delivers that (see ReactorResults). */
  private async runAsync(ctx: CallContext, code: CodeCall, args: JsonText, record: ReactorResultRecord): Promise<void> {
    let status: 'completed' | 'failed';
    let outcome: Outcome;
    try {
      outcome = await this.run(ctx, code, args);
      status = 'completed';
    } catch (error) {
      status = 'failed';
      // A refused tokenize block keeps the raw result the code returned, beside the error.
      const raw = error instanceof HttpError ? error.extensions?.raw : undefined;
      // The raw result goes beside the error, not inside it (as the synchronous answer has it).
      const { raw: _inside, ...problem }: Problem & { raw?: unknown } = problemOf(error);
      outcome = { ...(raw !== undefined && { raw }), error: problem };
    }
    await this.deps.results.finish(record, status, outcome);
  }
}

/** The leak guard's view of a reactor's run: its plaintext is the call's (args, req.svc). */
function reactorLeakCall(ctx: CallContext, code: CodeCall): LeakCall {
  return {
    tenantId: code.tenantId,
    kind: 'reactor',
    id: code.id,
    name: code.name,
    traceId: code.requestId,
    watchId: code.watchId,
    secrets: ctx.secrets,
  };
}

/** Who watches a synchronous reactor call pass: its args as sent, what the code returned, its end. */
export interface ReactorObserver {
  began(requestId: string, ctx: CallContext, reactor: ReactorRecord, args: unknown): void;
  returned(requestId: string, value: unknown): void;
  ended(requestId: string, error?: unknown): void;
}

/**
 * The tokenize block of a result was refused, after the code ran (and perhaps acted: charged a card). The
 * problem names whose grants refused it (the reactor's own Application, not the caller's key) and keeps the
 * code's `raw` result as a member of its own: `{ type, title, status, detail, raw, trace_id }`.
 */
function tokenizeRefused(
  error: unknown,
  reactorName: string,
  bound: ApplicationRecord | undefined,
  raw: unknown,
): unknown {
  if (!(error instanceof HttpError) || error.response) return error;
  const who = bound
    ? `its Application ${bound.name} (${bound.type}, ${bound.id})`
    : 'the calling Application (the reactor has none of its own)';
  // A permission refused is said of whose grants refused it: "its Application backend (...) lacks ...".
  const denied = error instanceof PermissionDenied ? error.denied : undefined;
  const reason = denied ? `${who} ${lacking(denied)}.` : `under ${who}: ${error.detail}`;
  const hint = denied && bound ? ` Grant that to ${bound.name}, or bind another Application.` : '';
  const kept = raw === undefined ? '' : ' The raw result is kept in "raw".';
  // The fields of a refused block, named from the result: `tokenize.card.data`.
  const under = (field: string) => `tokenize${field && !field.startsWith('[') ? '.' : ''}${field}`;
  const errors =
    error.errors && Object.fromEntries(Object.entries(error.errors).map(([field, list]) => [under(field), list]));
  const detail = `Reactor ${reactorName} ran, but the tokenize block of its result was refused: ${reason}${hint}${kept}`;
  return new HttpError(error.status, detail, {
    ...(errors && { errors }),
    title: 'Tokenize block refused',
    type: PROBLEM_TYPES.tokenizeRefused,
    // The refusal's explanation (issue 30) is the bound Application's, as the detail says.
    extensions: {
      ...(raw !== undefined && { raw }),
      ...(error.extensions?.explanation !== undefined && { explanation: error.extensions.explanation }),
    },
  });
}

/** `24 h`, `90 min`, `1.5 s`: the retention, as the 404 of a dropped result says it. */
function formatDuration(ms: number): string {
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${ms / 1000} s`;
}
