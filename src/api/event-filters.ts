/**
 * The filters of `GET /_emulator/events` that need nothing but the event (pure): the emulator narrows
 * its log with them, and `svc logs` applies them again as events arrive, for a server from before
 * `since`, `grep` and `request` (it ignores unknown query parameters).
 */
import type { EmulatorEvent } from './events.js';

export interface EventTextFilter {
  /** Events published at or after this time (ms since the epoch). */
  since?: number | undefined;
  /** A plain substring, case-insensitive, of any of the event's texts (path, names, console line, error). */
  grep?: string | undefined;
  /** A request id (trace id): the request, the run it made and the console lines of that run. */
  request?: string | undefined;
}

/** The test of those filters given; an event passes every one given. */
export function eventTextMatcher(filter: EventTextFilter): (event: EmulatorEvent) => boolean {
  const { since, request } = filter;
  const grep = filter.grep?.toLowerCase();
  return (event) => {
    if (since !== undefined && !(Date.parse(event.time) >= since)) return false;
    if (grep !== undefined && !eventText(event).includes(grep)) return false;
    if (request !== undefined && eventRequestId(event) !== request) return false;
    return true;
  };
}

/** Every text of an event (its string fields and numbers: a path, a name, a console line, a status), lowercased. */
export function eventText(event: EmulatorEvent): string {
  const texts: string[] = [];
  for (const [key, value] of Object.entries(event)) {
    if (key === 'time' || key === 'tenantId') continue;
    if (typeof value === 'string' || typeof value === 'number') texts.push(String(value));
  }
  return texts.join('\n').toLowerCase();
}

/** The request an event belongs to: a request's own trace id, the request id of a run, console line or webhook. */
export function eventRequestId(event: EmulatorEvent): string | undefined {
  if (event.type === 'request') return event.traceId;
  return event.type === 'invocation' || event.type === 'console' || event.type === 'webhook'
    ? event.requestId
    : undefined;
}
