import { Forwarder, type ForwarderOptions } from './forwarder.js';
import type { OutboundInterceptor, OutboundOrigin, OutboundRequest, OutboundResponse } from './types.js';

/**
 * The one door out of the emulator: every request a proxy forwards and every `https` request of a
 * reactor's or a transform's code passes here, named by its origin (tenant, proxy or code, call).
 * Interceptors (`use`) see each exchange in the order they were added, and may answer in the
 * network's place or observe what went and came back (destination mocks, a recorder, a leak guard
 * attach here, per tenant by the origin); after the last one, the forwarder sends it.
 */
export class OutboundGateway {
  private readonly forwarder: Forwarder;
  /** Replaced, never changed in place: an exchange under way keeps the chain it started with. */
  private interceptors: readonly OutboundInterceptor[] = [];

  constructor(options: ForwarderOptions = {}) {
    this.forwarder = new Forwarder(options);
  }

  /** Adds an interceptor after those already there; returns what removes it. */
  use(interceptor: OutboundInterceptor): () => void {
    this.interceptors = [...this.interceptors, interceptor];
    return () => {
      this.interceptors = this.interceptors.filter((other) => other !== interceptor);
    };
  }

  /**
   * Sends a request for `origin`: through the interceptors, then (unless one answered) to the
   * destination. Rejects with an HttpError (502 when the destination cannot be reached, its
   * network error as the cause) or what an interceptor threw.
   */
  send(request: OutboundRequest, origin: OutboundOrigin): Promise<OutboundResponse> {
    const chain = this.interceptors;
    // Most emulators have none: the forward costs no closure.
    if (chain.length === 0) return this.network(request, origin);
    const step = (at: number, current: OutboundRequest): Promise<OutboundResponse> => {
      const interceptor = chain[at];
      if (!interceptor) return this.network(current, origin);
      return interceptor(current, origin, (next) => step(at + 1, next));
    };
    return step(0, request);
  }

  /** Ends the connections a tenant's code kept (the tenant was deleted: svc/testing disposes forks by the thousand). */
  forgetTenant(tenantId: string): void {
    this.forwarder.forgetPool(tenantId);
  }

  /** Ends the connections kept alive (the emulator's stop). */
  close(): Promise<void> {
    return this.forwarder.close();
  }

  private network(request: OutboundRequest, origin: OutboundOrigin): Promise<OutboundResponse> {
    // Only a proxy's forward carries the hop header; user code's requests go as its code wrote them,
    // over the keep-alive connections of its tenant.
    return origin.kind === 'proxy'
      ? this.forwarder.send(request)
      : this.forwarder.send(request, { hop: false, pool: origin.tenantId });
  }
}
