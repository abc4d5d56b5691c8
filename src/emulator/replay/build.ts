/**
 * A finished call turned into what is kept: every text redacted against the call's secrets
 * (redact.ts), the stages in the order the call passed them. A re-run is built the same way, so
 * that a stage compares like with like.
 */
import { isUtf8 } from 'node:buffer';
import { problemOf } from '../errors.js';
import { CallRedactor, KEPT_BODY_BYTES } from './redact.js';
import type { PendingCall, RawAnswer, RawExchange } from './pending.js';
import type { KeptCall, KeptExchange, Stage } from './types.js';

/**
 * Headers that differ on every call whatever the code does: not kept. The framing too: a body is
 * compared itself, and a re-run's answer is framed anew (a chunked answer served with a length).
 */
const VOLATILE_HEADERS = new Set([
  'date',
  'svc-trace-id',
  'keep-alive',
  'connection',
  'transfer-encoding',
  'content-length',
]);

export function buildCall(pending: PendingCall): KeptCall {
  const redact = new CallRedactor(pending.sources);
  const exchanges = pending.exchanges.map((exchange) => keptExchange(exchange, redact));
  const stages: Stage[] = [];
  const base = {
    traceId: pending.traceId,
    tenantId: pending.tenantId,
    id: pending.id,
    name: pending.name,
    time: pending.time,
    applicationId: pending.applicationId,
    stages,
    exchanges,
  };
  const others = exchanges.filter((exchange) => exchange.kind !== 'proxy');
  const code = others.map((exchange, at) => ({
    stage: `${exchange.kind === 'transform' ? 'transform https' : 'https'} ${at + 1}`,
    value: { request: exchange.request, answer: exchange.answer ?? { error: exchange.error } },
  }));
  const console = consoleStage(pending);
  if (pending.kind === 'reactor') {
    const args = redact.value(pending.args ?? {});
    stages.push({ stage: 'args', value: args }, ...code, ...console, {
      stage: 'result',
      value: result(pending, redact),
    });
    return { ...base, kind: 'reactor', args };
  }
  const inbound = pending.inbound ?? { method: '', path: '', query: '', headers: {}, body: undefined };
  const kept = {
    method: inbound.method,
    path: redact.text(inbound.path),
    query: redact.query(inbound.query),
    headers: redact.headers(inbound.headers),
    body: inbound.body === undefined ? undefined : redact.text(inbound.body),
    ...(inbound.bodyCut && { bodyCut: true as const }),
  };
  stages.push({ stage: 'inbound', value: { ...kept, body: redact.body(kept.body, inbound.bodyCut).body } });
  const requestTransformed = pending.seen.get('request_transformed') as Record<string, unknown> | undefined;
  if (requestTransformed) stages.push({ stage: 'request_transformed', value: message(requestTransformed, redact) });
  const forward = exchanges.find((exchange) => exchange.kind === 'proxy');
  if (forward) {
    stages.push({ stage: 'destination_request', value: forward.request });
    stages.push({ stage: 'destination_answer', value: forward.answer ?? { error: forward.error } });
  }
  const responseTransformed = pending.seen.get('response_transformed') as Record<string, unknown> | undefined;
  if (responseTransformed) stages.push({ stage: 'response_transformed', value: message(responseTransformed, redact) });
  stages.push({ stage: 'answer', value: answer(pending, forward, redact) }, ...code, ...console);
  return { ...base, kind: 'proxy', inbound: kept };
}

function keptExchange(raw: RawExchange, redact: CallRedactor): KeptExchange {
  const request = {
    method: raw.method,
    url: redact.url(raw.url),
    headers: stable(redact.headers(raw.headers)),
    body: redact.body(raw.body, raw.bodyCut).body,
  };
  if (raw.status === undefined) return { kind: raw.kind, request, error: raw.error ?? 'no answer' };
  const body = redact.body(raw.answerBody, raw.answerCut);
  const bytes = binaryKept(raw, redact);
  const revealed = revealedIn(raw.answerBody, redact);
  return {
    kind: raw.kind,
    request,
    answer: {
      status: raw.status,
      headers: stable(redact.headers(raw.answerHeaders ?? {})),
      body: body.body,
      ...(body.truncated && { truncated: true }),
    },
    answerText: body.text,
    ...(bytes !== undefined && { answerBase64: bytes }),
    ...(revealed.length > 0 && { answerTokens: revealed }),
  };
}

/** The tokens whose plaintext an answer held (redaction made them expressions): a re-run is given those back. */
function revealedIn(bytes: Buffer | undefined, redact: CallRedactor): string[] {
  const { secrets } = redact.sources;
  if (!bytes || !secrets || secrets.size === 0) return [];
  return [...new Set(secrets.find(bytes.subarray(0, KEPT_BODY_BYTES).toString('utf8')).map((hit) => hit.tokenId))];
}

/**
 * An answer whose bytes are not text (gzip, an image) is served to a re-run as it came (its text
 * would not be), when it was kept whole and its bytes hold nothing redaction would replace.
 */
function binaryKept(raw: RawExchange, redact: CallRedactor): string | undefined {
  const bytes = raw.answerBody;
  if (bytes === undefined || raw.answerCut || isUtf8(bytes)) return undefined;
  const latin1 = bytes.toString('latin1');
  return redact.text(latin1) === latin1 ? bytes.toString('base64') : undefined;
}

/** A transform's message (`{ headers, body, ... }`) as kept. */
function message(value: Record<string, unknown>, redact: CallRedactor): unknown {
  const { headers, body, ...rest } = value;
  return {
    ...(redact.value(rest) as object),
    headers: stable(redact.headers((headers ?? {}) as Record<string, string>)),
    body: redact.body(body as string | undefined).body,
  };
}

function answer(pending: PendingCall, forward: KeptExchange | undefined, redact: CallRedactor): unknown {
  const error = pending.seen.get('error');
  if (error !== undefined) return problem(error, redact);
  const raw = pending.seen.get('answer') as RawAnswer | undefined;
  if (!raw) return { error: 'no answer' };
  return {
    status: raw.status,
    headers: stable(redact.headers(raw.headers)),
    body: raw.fromDestination ? (forward?.answer?.body ?? null) : redact.body(raw.body).body,
  };
}

function result(pending: PendingCall, redact: CallRedactor): unknown {
  const error = pending.seen.get('error');
  if (error !== undefined) return problem(error, redact);
  const value = pending.seen.get('result') as { raw?: unknown; tokenize?: unknown } | null | undefined;
  return {
    status: 200,
    raw: redact.value(value?.raw ?? null),
    tokenize: redact.value(value?.tokenize ?? null),
  };
}

/** An error as a stage shows it: its status and problem (type, title, detail), redacted. */
export function problem(error: unknown, redact: CallRedactor): unknown {
  const { status, type, title, detail } = problemOf(error);
  return { status, error: redact.value({ type, title, detail }) };
}

function consoleStage(pending: PendingCall): Stage[] {
  if (pending.console.length === 0) return [];
  const redact = new CallRedactor(pending.sources);
  const lines = pending.console.map((line) => redact.text(line));
  if (pending.droppedLines > 0) lines.push(`(${pending.droppedLines} more lines not kept)`);
  return [{ stage: 'console', value: lines }];
}

function stable(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (!VOLATILE_HEADERS.has(name)) out[name] = value;
  return out;
}
