import type { EmulatorEvent } from '../../../api/events.js';
import { eventsQuerySchema } from '../../../api/schemas.js';
import { fieldError } from '../../errors.js';
import { eventMatcher, isStatusFilter, type EventFilter } from '../../event-log.js';
import type { Exchange } from '../exchange.js';
import { type Route, type RouteDeps, managementCallerOf } from '../route.js';

/** A comment line now and then, so that proxies and the client can tell a quiet stream from a dead one. */
const HEARTBEAT_MS = 15_000;
/**
 * What a stream may hold unsent for a client that stops reading, beyond the recent events it began
 * with (a tenant's log is bounded too); past it the stream is ended, not grown.
 */
const MAX_UNSENT_BYTES = 1 << 20;

interface EventsQuery {
  follow?: '' | '1' | 'true' | '0' | 'false';
  reactor?: string;
  proxy?: string;
  status?: string;
  request?: string;
  since?: string;
  tail?: number;
  grep?: string;
}

/**
 * `GET /_emulator/events`: the management key's tenant's events as server-sent events (`data: <json>`),
 * the recent ones first; with `follow=1` the stream stays open for new ones. Filters apply here, at the
 * source: `reactor`, `proxy` (name or id), `status` (`5xx`, `404`), `request` (a trace id), `since` (an
 * ISO time), `grep` (a plain substring, case-insensitive), `tail` (the last N recent events only). HEAD
 * answers the headers only.
 */
export const eventRoutes: readonly Route[] = [
  {
    method: 'GET',
    path: '/_emulator/events',
    summary: "The tenant's events as server-sent events, recent ones first; follow=1 keeps the stream open.",
    schema: { querystring: eventsQuerySchema },
    admin: true,
    responses: {
      200: {
        description: 'Server-sent events, one `data: <JSON event>` each (src/api/events.ts).',
        contentType: 'text/event-stream',
        schema: { type: 'string' },
      },
    },
    handler: streamEvents,
  },
];

function streamEvents(call: Exchange, { services, eventLog: log }: RouteDeps): undefined {
  const caller = managementCallerOf(call, 'The event stream is shown to management Applications only.');
  const query = call.query as EventsQuery;
  if (query.status !== undefined && !isStatusFilter(query.status)) {
    throw fieldError('status must be a status or a class of them: 5xx, 4xx, 404...', {
      status: ['must look like 5xx or 404'],
    });
  }
  const since = query.since === undefined ? undefined : Date.parse(query.since);
  if (since !== undefined && Number.isNaN(since)) {
    throw fieldError('since must be an ISO 8601 time, such as 2026-11-27T10:00:00Z.', {
      since: ['must be an ISO 8601 time'],
    });
  }
  const filter: EventFilter = {
    ...(since !== undefined && { since }),
    ...(query.grep !== undefined && { grep: query.grep }),
    ...(query.reactor !== undefined && { reactor: query.reactor }),
    ...(query.proxy !== undefined && { proxy: query.proxy }),
    ...(query.status !== undefined && { status: query.status }),
    ...(query.request !== undefined && { request: query.request }),
  };
  const follow = query.follow !== undefined && query.follow !== '0' && query.follow !== 'false';
  const lookup = {
    reactor: (id: string) => services.reactors.ownerOf(id),
    proxy: (id: string) => services.proxies.ownerOf(id),
  };
  const matches = eventMatcher(filter, lookup, caller.tenantId);

  // The route writes its answer itself.
  const raw = call.res;
  raw.writeHead(200, {
    ...call.headersSoFar(),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    ...(follow && { 'x-accel-buffering': 'no' }),
  });
  if (call.method === 'HEAD') {
    raw.end();
    return undefined;
  }
  const sendOne = (event: EmulatorEvent) => raw.write(`data: ${JSON.stringify(event)}\n\n`);
  const write = (event: EmulatorEvent) => {
    if (matches(event)) sendOne(event);
  };
  // The recent events are written at once, however fast the client reads them: they are in memory already.
  const recent = log.recentOf(caller.tenantId).filter(matches);
  for (const event of query.tail === undefined ? recent : recent.slice(recent.length - query.tail)) sendOne(event);
  if (!follow) {
    raw.end();
    return undefined;
  }
  const unsent = raw.writableLength + MAX_UNSENT_BYTES;
  const send = (event: EmulatorEvent) => {
    write(event);
    if (raw.writableLength > unsent) raw.destroy();
  };
  // The headers go now: a client waits for them before it reads, and a quiet tenant may send nothing for long.
  raw.flushHeaders();
  const heartbeat = setInterval(() => raw.write(': heartbeat\n\n'), HEARTBEAT_MS);
  heartbeat.unref();
  const unsubscribe = log.follow(caller.tenantId, send, () => {
    // The emulator stops: the stream ends, and no heartbeat comes after its end (a write after the end throws).
    clearInterval(heartbeat);
    raw.end();
  });
  raw.once('close', () => {
    clearInterval(heartbeat);
    unsubscribe();
  });
  return undefined;
}
