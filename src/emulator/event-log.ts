import type { EmulatorEvent } from '../api/events.js';
import { STATUS_FILTER_PATTERN } from '../api/patterns.js';
import type { EmulatorEvents } from './events.js';

/** How many recent events each tenant's log keeps for `svc logs` without --follow. */
export const RECENT_EVENTS = 1000;

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
}

/** Finds a reactor's or a proxy's name and tenant by id (the services' `ownerOf`). */
export type OwnerLookup = (id: string) => { name: string; tenantId: string } | undefined;

type Listener = (event: EmulatorEvent) => void;

/**
 * The emulator's events by tenant, for `svc logs`: a bounded buffer of each tenant's recent events
 * and live subscriptions per tenant. Events without a tenant (the emulator's own warnings, errors
 * and reloads) are kept out: they may concern another tenant, and a key is shown its tenant only.
 */
export class TenantEventLog {
  /** Each tenant's recent events: `events` is full before it wraps, and `next` is where the oldest is. */
  private readonly recent = new Map<string, { events: EmulatorEvent[]; next: number }>();
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
    const ring = this.recent.get(tenantId);
    if (!ring) return [];
    return ring.next === 0
      ? ring.events.slice()
      : [...ring.events.slice(ring.next), ...ring.events.slice(0, ring.next)];
  }

  /**
   * Calls `listener` with each new event of the tenant, and `onClose` if the log closes first (the
   * emulator stops); the function returned ends the subscription.
   */
  follow(tenantId: string, listener: Listener, onClose: () => void): () => void {
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
    this.unsubscribe();
    for (const close of [...this.closers]) close();
  }

  private add(event: EmulatorEvent): void {
    const tenantId = 'tenantId' in event ? event.tenantId : undefined;
    if (tenantId === undefined) return;
    let ring = this.recent.get(tenantId);
    if (!ring) this.recent.set(tenantId, (ring = { events: [], next: 0 }));
    // Once full, the oldest is overwritten in place: dropping it from the front of a list would
    // move all the others, twice per reactor call.
    if (ring.events.length < this.limit) ring.events.push(event);
    else {
      ring.events[ring.next] = event;
      ring.next = (ring.next + 1) % this.limit;
    }
    for (const listener of this.listeners.get(tenantId) ?? []) listener(event);
  }
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
  return (event) => {
    if (reactor && !ofCode(event, 'reactor', reactor)) return false;
    if (proxy && !ofCode(event, 'proxy', proxy)) return false;
    if (status && !status(statusOf(event))) return false;
    if (filter.request !== undefined && requestOf(event) !== filter.request) return false;
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

function requestOf(event: EmulatorEvent): string | undefined {
  if (event.type === 'request') return event.traceId;
  return event.type === 'invocation' || event.type === 'console' || event.type === 'webhook'
    ? event.requestId
    : undefined;
}
