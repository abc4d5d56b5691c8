import { randomUUID } from 'node:crypto';
import type { EmulatorEventInit } from '../events.js';
import { originForm } from './router.js';

/** A trace id a caller may choose: anything else it sends is replaced (it is echoed and logged). */
const TRACE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The trace id of a request: the caller's `SVC-TRACE-ID` when it is a plausible id, else a new one.
 */
export function traceIdOf(given: string | string[] | undefined): string {
  return typeof given === 'string' && TRACE_ID.test(given) ? given : randomUUID();
}

/**
 * The log line of an answered request. The path only: a query string may carry a proxy key.
 * `ms` is rounded to a tenth; the tenant is the caller's (on /proxy the proxy's), when known; on /proxy,
 * `detokenized` counts the tokens its body referenced, once the proxy detokenized them; `reason` is a
 * refusal's one line (a 401, a 403, a detokenization 400: its explanation's reason).
 */
export function requestEvent(
  method: string,
  url: string,
  status: number,
  ms: number,
  traceId: string,
  tenantId: string | undefined,
  detokenized?: number,
  reason?: string,
): EmulatorEventInit {
  // An absolute target by its path: its authority may carry userinfo.
  const target = url.charCodeAt(0) === 47 ? url : originForm(url);
  const query = target.indexOf('?');
  const event: EmulatorEventInit = {
    type: 'request',
    method,
    path: query < 0 ? target : target.slice(0, query),
    status,
    ms: Math.round(ms * 10) / 10,
    traceId,
    tenantId,
  };
  // Set only when known, without a spread: this runs for every request.
  if (detokenized !== undefined) event.detokenized = detokenized;
  if (reason !== undefined) event.reason = reason;
  return event;
}
