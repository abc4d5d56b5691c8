/**
 * One outbound exchange of a call being collected: its request and answer taken as they pass (the
 * answer's first 64 KB teed off its stream, which goes on untouched), or, for a re-run, answered
 * from the kept call's exchanges (unless live): the first not yet used with the same method and
 * URL (a proxy's forward: the kept forward, whatever its URL). A request the kept call did not
 * make is a difference, and fails with a problem that says so.
 */
import { Readable } from 'node:stream';
import { HttpError } from '../errors.js';
import { CallSecrets } from '../leaks/secrets.js';
import type { OutboundNext, OutboundOrigin, OutboundRequest, OutboundResponse } from '../outbound/index.js';
import { KEPT_BODY_BYTES, CallRedactor } from './redact.js';
import { KEPT_EXCHANGES, type PendingCall, type RawExchange, type Served } from './pending.js';
import type { KeptExchange } from './types.js';
import { readAll } from '../../lib/read-all.js';
import { tapHead } from '../../lib/stream-head.js';

/** Headers of a kept answer not served again: the body served is the kept text, framed anew (bytes kept as they came keep their encoding). */
const REFRAMED = new Set(['content-length', 'transfer-encoding', 'content-encoding']);

export async function exchangeOf(
  pending: PendingCall,
  request: OutboundRequest,
  origin: OutboundOrigin,
  next: OutboundNext,
  settled: () => void,
): Promise<OutboundResponse> {
  const raw: RawExchange = {
    kind: origin.kind,
    method: request.method.toUpperCase(),
    url: request.url.href,
    headers: { ...request.headers },
    body: undefined,
  };
  const kept = pending.exchanges.length < KEPT_EXCHANGES;
  if (kept) pending.exchanges.push(raw);
  else pending.droppedExchanges += 1;
  const served = pending.served && !pending.served.live ? pending.served : undefined;
  let sent = request;
  if (served && request.body instanceof Readable) raw.body = await readAll(request.body);
  else if (request.body instanceof Readable) {
    pending.open += 1;
    sent = {
      ...request,
      body: tee(request.body, (bytes, cut) => {
        raw.body = bytes;
        raw.bodyCut = cut;
        pending.open -= 1;
        settled();
      }),
    };
  } else if (request.body !== undefined && request.body.length > KEPT_BODY_BYTES) {
    // Held as what is kept of it (a copy of its first 64 KB), not whole until the answer has streamed.
    raw.body = Buffer.from(Buffer.from(request.body).subarray(0, KEPT_BODY_BYTES));
    raw.bodyCut = true;
  } else raw.body = request.body;
  if (served) {
    try {
      return answerKept(pending, raw, served);
    } catch (error) {
      raw.error = (error as HttpError).detail;
      throw error;
    }
  }
  let response: OutboundResponse;
  try {
    response = await next(sent);
  } catch (error) {
    raw.error = error instanceof HttpError ? error.detail : (error as Error).message;
    throw error;
  }
  raw.status = response.status;
  raw.answerHeaders = response.headers;
  pending.open += 1;
  const body = tee(response.body, (bytes, cut) => {
    raw.answerBody = bytes;
    raw.answerCut = cut;
    pending.open -= 1;
    settled();
  });
  return { ...response, body };
}

/** The kept answer of the request a re-run makes, or a problem naming what the kept call did not make. */
function answerKept(pending: PendingCall, raw: RawExchange, served: Served): OutboundResponse {
  const redact = new CallRedactor(pending.sources);
  const url = redact.url(raw.url);
  const at = served.exchanges.findIndex(
    (exchange, index) =>
      !served.used.has(index) &&
      exchange.kind === raw.kind &&
      (raw.kind === 'proxy' || (exchange.request.method === raw.method && exchange.request.url === url)),
  );
  const exchange: KeptExchange | undefined = served.exchanges[at];
  if (!exchange) {
    throw new HttpError(
      502,
      `svc replay: the recorded call made no ${raw.method} ${url}: the code's request has no recorded answer (replay with live to send it).`,
      { title: 'Not recorded' },
    );
  }
  served.used.add(at);
  if (!exchange.answer) {
    throw new HttpError(502, `svc replay: when recorded, ${raw.method} ${url} had no answer: ${exchange.error}.`, {
      title: 'Destination unreachable',
    });
  }
  const bytes = exchange.answerBase64 === undefined ? undefined : Buffer.from(exchange.answerBase64, 'base64');
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(exchange.answer.headers))
    if (!REFRAMED.has(name) || (bytes !== undefined && name === 'content-encoding')) headers[name] = value;
  const body =
    bytes ??
    Buffer.from(
      served.restore(exchange.answerText ?? '', exchange.answerTokens ?? [], (value, id) =>
        secretsOf(pending).add(value, id),
      ),
    );
  headers['content-length'] = String(body.length);
  raw.status = exchange.answer.status;
  // Kept as it was recorded: the framing served is this re-run's own.
  raw.answerHeaders = exchange.answer.headers;
  raw.answerBody = body;
  raw.answerCut = exchange.answer.truncated === true;
  return { status: exchange.answer.status, headers, body: Readable.from([body]) };
}

/**
 * The set a re-run's given-back plaintext goes to: the call's own (the leak guard's, which the
 * interceptor has set by now), or a new one when nothing watches the call.
 */
function secretsOf(pending: PendingCall): CallSecrets {
  let { secrets } = pending.sources;
  if (!secrets) pending.sources = { ...pending.sources, secrets: (secrets = new CallSecrets()) };
  return secrets;
}

/** `stream` passed on as it is; its first 64 KB given to `kept` once it has ended or closed. */
function tee(stream: Readable, kept: (bytes: Buffer, cut: boolean) => void): Readable {
  return tapHead(stream, KEPT_BODY_BYTES, ({ head, size }) => kept(head, size > KEPT_BODY_BYTES));
}
