import { BODY_LIMIT_LABEL } from '../../api/limits.js';
import { decoded } from '../leaks/charset.js';
import { headerText, type LeakCall, type LeakGuard } from '../leaks/guard.js';
import { scannedStream } from '../leaks/sinks.js';
import type { Caller } from '../services/applications.js';
import { CallContext } from '../services/call-context.js';
import type { ProxyRecord } from '../store/records.js';
import { type ProxyAnswer, readWhole } from './answer.js';
import { isBinaryContentType } from './forwarded-headers.js';
import { TRANSFORM_PAYLOAD_LIMIT } from './transforms.js';

/** The proxy call the guard watches, named once the proxy is found: its plaintext is its caller's context's. */
export function watchProxy(
  watched: LeakCall,
  proxy: ProxyRecord,
  url: URL,
  detokenizer: Caller | CallContext | undefined,
): void {
  watched.tenantId = proxy.tenant_id;
  watched.id = proxy.id;
  watched.name = proxy.name;
  watched.destination = url.origin;
  if (detokenizer instanceof CallContext) watched.secrets = detokenizer.secrets;
}

/**
 * The proxy's answer to its caller, checked for the call's plaintext and card numbers: whole when
 * it is (a small answer, a response transform's); streamed, scanned as it passes (warn), or read
 * whole first, within a transform's payload limit (fail: nothing is sent before it is checked). A
 * binary or compressed answer is not read: no text form of a value stands in it as sent.
 */
export async function guardedAnswer(guard: LeakGuard, watched: LeakCall, answer: ProxyAnswer): Promise<ProxyAnswer> {
  const { body } = answer;
  if (watched.refused) {
    // Its code's request was refused (fail mode) and the call went on: the leak problem is its answer.
    if (body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body)) body.destroy();
    throw watched.refused;
  }
  if (!guard.on) return answer;
  // Its headers (a response transform's, or the destination's passed back) are the caller's too.
  // Headers are searched without the values that are common words or header words (vocabulary.ts).
  guard.check(watched, 'answer', '', headerText(answer.headers));
  if (body === undefined || !readable(answer.headers)) return answer;
  // Read as the charset it declares (a UTF-16 answer is scanned as the text it is).
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    guard.check(watched, 'answer', decoded(body, answer.headers));
    return answer;
  }
  if (guard.mode !== 'fail') return { ...answer, body: scannedStream(guard, watched, 'answer', body, answer.headers) };
  const whole = await readWhole(
    body,
    TRANSFORM_PAYLOAD_LIMIT,
    new URL(watched.destination ?? 'http://localhost'),
    `more than ${BODY_LIMIT_LABEL}, over what the leak guard reads whole in fail mode`,
  );
  guard.check(watched, 'answer', decoded(whole, answer.headers));
  return { ...answer, body: whole };
}

function readable(headers: ProxyAnswer['headers']): boolean {
  const type = headers['content-type'];
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding !== 'identity') return false;
  return !isBinaryContentType(typeof type === 'string' ? type : undefined);
}
