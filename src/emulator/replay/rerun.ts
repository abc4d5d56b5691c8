/**
 * A kept call run again through today's code, in process: a proxy call's kept inbound request (its
 * expressions detokenized again, under today's tokens and the Application that made the call)
 * through the proxy's current transforms, its destination answered from what was kept (or, live,
 * the network); a reactor call's kept args through its current code, its https requests answered
 * from what was kept. The re-run is collected as a call is (capture.ts) and compared stage by
 * stage. It writes nothing: `req.svc` refuses writes in a re-run, the tokenize block is not
 * tokenized, and nothing of it is kept.
 */
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { HttpError } from '../errors.js';
import type { ProxyAnswer, ProxyCall, ProxyPipeline } from '../proxy/pipeline.js';
import type { Caller } from '../services/applications.js';
import type { CallContext } from '../services/call-context.js';
import type { ReactorInvocations } from '../services/reactor-invocation.js';
import type { TokenContext, TokenService } from '../services/tokens.js';
import type { ApplicationRecord } from '../store/records.js';
import type { Store } from '../store/store.js';
import type { CallCapture } from './capture.js';
import { problem } from './build.js';
import { compareStages } from './compare.js';
import { CallRedactor } from './redact.js';
import type { Served } from './pending.js';
import type { ReplayAnswer } from '../../api/replay.js';
import type { KeptCall, KeptProxyCall, KeptReactorCall } from './types.js';

/** The most of a re-run's streamed answer read (the rest is cut: only 64 KB is compared). */
const DRAINED_BYTES = 10 * 1024 * 1024;

export interface RerunDeps {
  store: Store;
  tokens: TokenService;
  pipeline: ProxyPipeline;
  reactors: ReactorInvocations;
  capture: CallCapture;
}

export async function rerun(deps: RerunDeps, kept: KeptCall, live: boolean): Promise<ReplayAnswer> {
  const traceId = randomUUID();
  const served: Served = { exchanges: kept.exchanges, used: new Set(), live, restore: (text) => text };
  let collected: (call: KeptCall) => void = () => {};
  let sunk = false;
  const made = new Promise<KeptCall>((resolve) => (collected = resolve));
  const release = deps.capture.expect(traceId, served, (call) => {
    sunk = true;
    collected(call);
  });
  try {
    let failure: unknown;
    try {
      if (kept.kind === 'proxy') await drain(await rerunProxy(deps, kept, traceId, served));
      else await rerunReactor(deps, kept, traceId, served);
    } catch (error) {
      if (refusals.has(error as object)) throw error;
      failure = error;
    }
    // Refused before any stage was seen (a request the proxy refuses at once): the error is the answer.
    const call = sunk || deps.capture.collecting(traceId) || failure === undefined ? await made : undefined;
    const stages = call?.stages ?? [
      { stage: kept.kind === 'proxy' ? 'answer' : 'result', value: problem(failure, new CallRedactor()) },
    ];
    const diffs = compareStages(kept.stages, stages);
    return {
      trace_id: kept.traceId,
      replay_trace_id: traceId,
      kind: kept.kind,
      id: kept.id,
      name: kept.name,
      time: kept.time,
      live,
      same: diffs.every((diff) => diff.same),
      stages: diffs,
    };
  } finally {
    release();
  }
}

async function rerunProxy(deps: RerunDeps, kept: KeptProxyCall, traceId: string, served: Served): Promise<ProxyAnswer> {
  const proxy = deps.store.proxies.get(kept.tenantId, kept.id);
  if (!proxy) throw refused(404, `The proxy ${kept.name} (${kept.id}) of call ${kept.traceId} was deleted since.`);
  let caller: Caller | CallContext | undefined;
  if (proxy.require_auth) {
    const application = applicationOf(deps, kept);
    caller = deps.tokens.callContext({ caller: { tenantId: kept.tenantId, application } }, 'replaying a proxy call');
  } else {
    const application = proxy.application_id
      ? deps.store.applications.get(proxy.tenant_id, proxy.application_id)
      : undefined;
    caller = application ? { tenantId: proxy.tenant_id, application } : undefined;
  }
  if (caller) served.restore = restorer(deps.tokens, 'caller' in caller ? caller : { caller });
  const { inbound } = kept;
  if (inbound.bodyCut)
    throw refused(
      409,
      `Call ${kept.traceId} sent a body over 64 KB, of which svc replay keeps the first 64 KB only: it cannot be sent again. Make the call again instead.`,
    );
  const rawHeaders = Object.entries(inbound.headers).flat();
  const call: ProxyCall = {
    method: inbound.method,
    suffix: inbound.path,
    query: inbound.query,
    rawHeaders,
    body: inbound.body === undefined ? undefined : Buffer.from(inbound.body),
    proxyKey: undefined,
    apiKey: undefined,
    keepAlive: undefined,
    connection: undefined,
    hop: false,
    traceId,
    rerun: { proxy, caller },
  };
  return deps.pipeline.invoke(call);
}

async function rerunReactor(deps: RerunDeps, kept: KeptReactorCall, traceId: string, served: Served): Promise<void> {
  const reactor = deps.store.reactors.get(kept.tenantId, kept.id);
  if (!reactor) throw refused(404, `The reactor ${kept.name} (${kept.id}) of call ${kept.traceId} was deleted since.`);
  const application = applicationOf(deps, kept);
  const ctx = deps.tokens.callContext({ caller: { tenantId: kept.tenantId, application } }, 'replaying a reactor call');
  served.restore = restorer(deps.tokens, ctx);
  await deps.reactors.invoke(ctx, reactor, { args: kept.args as Record<string, unknown> }, traceId, { rerun: true });
}

/** A kept token expression, exactly as redaction writes it. */
const KEPT_EXPRESSION = /\{\{ ([A-Za-z0-9_-]{1,128}) \}\}/g;

/**
 * Gives a kept answer's expressions their plaintext again, under the permissions of the call:
 * only those redaction made (the tokens the answer held the plaintext of); a token whose data is
 * not text, gone, or no longer readable stays an expression, as does one the answer held as text.
 */
function restorer(tokens: TokenService, ctx: TokenContext): Served['restore'] {
  return (text, given, revealed) =>
    text.replace(KEPT_EXPRESSION, (expression, id: string) => {
      if (!given.includes(id)) return expression;
      let value: unknown;
      try {
        value = tokens.detokenize(ctx, `{{ ${id} }}`);
      } catch {
        return expression;
      }
      if (typeof value !== 'string' && typeof value !== 'number') return expression;
      revealed(String(value), id);
      return String(value);
    });
}

/** The Application that made the call: its expressions are detokenized again under it, so it must still exist. */
function applicationOf(deps: RerunDeps, kept: KeptCall): ApplicationRecord {
  const application =
    kept.applicationId === undefined ? undefined : deps.store.applications.get(kept.tenantId, kept.applicationId);
  if (!application)
    throw refused(
      409,
      `The Application that made call ${kept.traceId} (${kept.applicationId ?? 'none'}) no longer exists: its expressions cannot be detokenized again under it.`,
    );
  return application;
}

/** Why a call cannot be re-run (answered as the replay's own problem, not as a stage). */
const refusals = new WeakSet<object>();

function refused(status: number, detail: string): HttpError {
  const error = new HttpError(status, detail);
  refusals.add(error);
  return error;
}

/** Reads a streamed answer to its end (the capture tees its first 64 KB as it passes). */
async function drain(answer: ProxyAnswer): Promise<void> {
  const body = answer.body;
  if (body === undefined || typeof body === 'string' || Buffer.isBuffer(body)) return;
  let size = 0;
  for await (const chunk of body as Readable) {
    size += (chunk as Buffer).length;
    if (size > DRAINED_BYTES) {
      (body as Readable).destroy();
      break;
    }
  }
}
