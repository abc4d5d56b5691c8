import { eventTextMatcher } from '../api/event-filters.js';
import type { EmulatorEvent } from '../api/events.js';
import { STATUS_FILTER_PATTERN } from '../api/patterns.js';
import type { EmulatorEvents } from './events.js';

/** How many recent events each tenant's log keeps for `svc logs` without --follow. */
export const RECENT_EVENTS = 1000;
/** And how much of them, about in bytes of their JSON: a console line alone may be 64 KiB. */
export const RECENT_BYTES = 1 << 20;
/**
 * How many tenants' logs are kept, the least recently active dropped first: `POST /_emulator/tenants`
 * mints any number of tenants, and none is ever deleted.
 */
export const MAX_TENANT_LOGS = 64;

/** What `GET /_emulator/events` narrows to; each given field must match. */
export interface EventFilter {
  /** A reactor by id or name: its runs, console lines, webhooks and the requests on its path. */
  reactor?: string;
  /** A proxy by id or name: its transforms, their console lines and the requests on its path. */
  proxy?: string;
  /** `5xx`, `4xx`, `404`...: events that carry such a status (requests, runs, webhook answers). */
  status?: string;
  /** A request id (trace id): the request, the run it made and the console lines of that run. */
  request?: string;
  /** Events published at or after this time (ms since the epoch). */
  since?: number;
  /** A plain substring, case-insensitive, of any of the event's texts (path, names, console line, error). */
  grep?: string;
}

/** Finds a reactor's or a proxy's name and tenant by id (the services' `ownerOf`). */
export type OwnerLookup = (id: string) => { name: string; tenantId: string } | undefined;

type Listener = (event: EmulatorEvent) => void;

interface Recent {
  /** The events from `head` on are kept; those before it are dropped, and cut off now and then. */
  events: (EmulatorEvent | undefined)[];
  /** The size of each of `events` (sizeOf), and the sum of those kept. */
  sizes: number[];
  head: number;
  bytes: number;
}

/**
 * The emulator's events by tenant, for `svc logs`: a bounded buffer of each tenant's recent events
 * and live subscriptions per tenant. Events without a tenant (the emulator's own warnings, errors
 * and reloads) are kept out: they may concern another tenant, and a key is shown its tenant only.
 */
export class TenantEventLog {
  /** By tenant, the least recently active first. */
  private readonly recent = new Map<string, Recent>();
  /** The tenant of the last event: most events are of the tenant before them, and keep the order as it is. */
  private latest: string | undefined;
  private closed = false;
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly closers = new Set<() => void>();
  private readonly unsubscribe: () => void;

  constructor(
    events: EmulatorEvents,
    private readonly limit = RECENT_EVENTS,
  ) {
    this.unsubscribe = events.subscribe((event) => this.add(event));
  }

  /** The tenant's recent events, oldest first. */
  recentOf(tenantId: string): readonly EmulatorEvent[] {
    const recent = this.recent.get(tenantId);
    return recent ? (recent.events.slice(recent.head) as EmulatorEvent[]) : [];
  }

  /**
   * Calls `listener` with each new event of the tenant, and `onClose` if the log closes first (the
   * emulator stops); the function returned ends the subscription.
   */
  follow(tenantId: string, listener: Listener, onClose: () => void): () => void {
    // A request that was under way when the emulator began to stop: nothing more will come.
    if (this.closed) {
      onClose();
      return () => {};
    }
    let set = this.listeners.get(tenantId);
    if (!set) this.listeners.set(tenantId, (set = new Set()));
    const listeners = set;
    listeners.add(listener);
    const end = () => {
      listeners.delete(listener);
      if (listeners.size === 0) this.listeners.delete(tenantId);
      this.closers.delete(close);
    };
    const close = () => {
      end();
      onClose();
    };
    this.closers.add(close);
    return end;
  }

  /** How many streams follow now: a stream whose client went away is no longer counted. */
  get following(): number {
    return this.closers.size;
  }

  /** Ends every subscription: open streams are told to end, so that the server's stop does not wait on them. */
  close(): void {
    this.closed = true;
    this.unsubscribe();
    for (const close of [...this.closers]) close();
  }

  private add(event: EmulatorEvent): void {
    const tenantId = 'tenantId' in event ? event.tenantId : undefined;
    if (tenantId === undefined) return;
    let recent = this.recent.get(tenantId);
    if (recent && tenantId !== this.latest) {
      // Moved last: the least recently active tenant is the first in the map.
      this.recent.delete(tenantId);
      this.recent.set(tenantId, recent);
    } else if (!recent) {
      this.recent.set(tenantId, (recent = { events: [], sizes: [], head: 0, bytes: 0 }));
      const oldest = this.recent.keys().next().value;
      if (this.recent.size > MAX_TENANT_LOGS && oldest !== undefined) this.recent.delete(oldest);
    }
    this.latest = tenantId;
    const size = sizeOf(event);
    recent.events.push(event);
    recent.sizes.push(size);
    recent.bytes += size;
    // The newest event is kept whatever its size. The oldest are dropped by moving `head` (two events a
    // reactor call: shifting a list of a thousand each time moved all the others), and cut off in one go
    // once as many are dropped as a log keeps.
    while (
      recent.events.length - recent.head > 1 &&
      (recent.events.length - recent.head > this.limit || recent.bytes > RECENT_BYTES)
    ) {
      recent.bytes -= recent.sizes[recent.head]!;
      recent.events[recent.head] = undefined;
      recent.head++;
    }
    if (recent.head >= this.limit) {
      recent.events.splice(0, recent.head);
      recent.sizes.splice(0, recent.head);
      recent.head = 0;
    }
    for (const listener of this.listeners.get(tenantId) ?? []) listener(event);
  }
}

/** About the size of an event's JSON, from above: its strings, and room for its names and numbers. */
function sizeOf(event: EmulatorEvent): number {
  let size = 200;
  for (const value of Object.values(event)) if (typeof value === 'string') size += value.length;
  return size;
}

/**
 * The test of a filter on a tenant's events. A name or id is looked up once: given an id, the
 * events that carry only the name (console lines) match too.
 */
export function eventMatcher(
  filter: EventFilter,
  lookup: { reactor: OwnerLookup; proxy: OwnerLookup },
  tenantId: string,
): (event: EmulatorEvent) => boolean {
  const reactor = filter.reactor === undefined ? undefined : named(filter.reactor, lookup.reactor, tenantId);
  const proxy = filter.proxy === undefined ? undefined : named(filter.proxy, lookup.proxy, tenantId);
  const status = filter.status === undefined ? undefined : statusTest(filter.status);
  const text = eventTextMatcher(filter);
  return (event) => {
    if (!text(event)) return false;
    if (reactor && !ofCode(event, 'reactor', reactor)) return false;
    if (proxy && !ofCode(event, 'proxy', proxy)) return false;
    if (status && !status(statusOf(event))) return false;
    return true;
  };
}

/** Whether a status filter is one this endpoint understands: `5xx`, `4xx`, `404`. */
export function isStatusFilter(value: string): boolean {
  return STATUS_FILTER_PATTERN.test(value);
}

interface Named {
  ids: Set<string>;
  names: Set<string>;
}

function named(given: string, lookup: OwnerLookup, tenantId: string): Named {
  const owner = lookup(given);
  // Another tenant's id is not looked through: its name says nothing of this tenant's events.
  if (owner && owner.tenantId === tenantId) return { ids: new Set([given]), names: new Set([owner.name]) };
  return { ids: new Set([given]), names: new Set([given]) };
}

function ofCode(event: EmulatorEvent, kind: 'reactor' | 'proxy', code: Named): boolean {
  switch (event.type) {
    case 'invocation':
      if (event.kind !== (kind === 'reactor' ? 'reactor' : 'transform')) return false;
      // A transform is reported as `name (request)` or `name (response)`.
      return (
        code.ids.has(event.id) || code.names.has(kind === 'proxy' ? event.name.replace(/ \(\w+\)$/, '') : event.name)
      );
    case 'console':
      return code.names.has(event.source) || code.ids.has(event.source);
    case 'webhook':
      return kind === 'reactor' && code.ids.has(event.reactorId);
    case 'request': {
      const [, collection, id] = event.path.split('/');
      return (
        collection === (kind === 'reactor' ? 'reactors' : 'proxies') && id !== undefined && code.ids.has(decoded(id))
      );
    }
    default:
      return false;
  }
}

/** A path segment as an id; the router answered a segment that is not valid percent-encoding with a 400. */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function statusTest(filter: string): (status: number | undefined) => boolean {
  const wanted = filter.toLowerCase();
  if (wanted.endsWith('xx')) return (status) => status !== undefined && Math.floor(status / 100) === Number(wanted[0]);
  return (status) => status === Number(wanted);
}

function statusOf(event: EmulatorEvent): number | undefined {
  return event.type === 'request' || event.type === 'invocation' || event.type === 'webhook' ? event.status : undefined;
}
