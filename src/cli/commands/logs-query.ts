import { eventTextMatcher } from '../../api/event-filters.js';
import type { EmulatorEvent } from '../../api/events.js';
import { UsageError } from '../io/errors.js';
import { dateTimeOption, intOption } from '../io/input.js';

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** How far back a log goes at most, as `--tail` is bounded: more is never kept. */
const MAX_TAIL = 100_000;

/**
 * `--since`: a duration back from `now` (`90s`, `10m`, `2h`, `1d`) or an ISO 8601 date-time with a zone;
 * the ISO time it names, or a usage error.
 */
export function sinceOption(value: string | undefined, now: number): string | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d+(?:\.\d+)?)(s|m|h|d)$/.exec(value.trim());
  if (match) return new Date(now - Math.round(Number(match[1]) * UNITS[match[2]!]!)).toISOString();
  if (/^\d/.test(value) && value.includes('-')) return dateTimeOption(value, '--since');
  throw new UsageError(
    `--since takes a duration (90s, 10m, 2h, 1d) or an ISO 8601 time (2026-11-27T10:00:00Z), not "${value}".`,
  );
}

export function tailOption(value: string | undefined): number | undefined {
  return intOption(value, '--tail', { min: 0, max: MAX_TAIL });
}

export interface LocalFilter {
  since?: string;
  grep?: string;
  request?: string;
}

/**
 * The filters the emulator applies, applied again as events arrive: a server from before `since`,
 * `grep` and `tail` ignores them (unknown query parameters), and its events are narrowed here instead.
 */
export function localMatcher(filter: LocalFilter): (event: EmulatorEvent) => boolean {
  return eventTextMatcher({
    since: filter.since === undefined ? undefined : Date.parse(filter.since),
    grep: filter.grep,
    request: filter.request,
  });
}

/** An event as `--json` prints it: snake_case like the API (`trace_id`, `tenant_id`, `request_id`). */
export function snakeCased(event: EmulatorEvent): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event)) out[key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = value;
  return out;
}
