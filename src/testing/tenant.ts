import type { Agent } from 'node:http';
import { API_KEY_HEADER, JSON_CONTENT_TYPE, PROXY_KEY_HEADER, TRACE_HEADER } from '../api/headers.js';
import { ApiClient } from '../client/index.js';
import type { EmulatorOutbound, EmulatorTenants, ForkedTenant } from '../emulator/index.js';
import type { DestinationMocks } from '../emulator/outbound/mocks.js';
import { TenantDestinations } from './destinations.js';
import { TenantClock } from './clock.js';
import { send, type Answer } from './http.js';
import type { ConsoleLines } from './logs.js';
import type { ReceivedWebhook, WebhookReceiver, WebhookReply } from './webhooks.js';

/** What a reactor or proxy call answered, with the console lines its code wrote. */
export interface CallResult extends Answer {
  /** The console lines of the call's user code (reactor, or the proxy's transforms), in order. */
  logs: string[];
  /** `SVC-TRACE-ID` of the call: what the emulator's events and `svc logs --request` name it by. */
  traceId: string | undefined;
}

/** How a reactor is invoked beyond its args. */
export interface InvokeOptions {
  /** Asynchronous (Enterprise): the result is delivered to this URL (see `t.webhooks.receiver()`). */
  callbackUrl?: string;
  /** The asynchronous run's timeout. */
  timeoutMs?: number;
  /** The caller's API key; default the tenant's private key. */
  key?: string;
}

/** A proxy call: the path after `/proxy`, and the caller's headers (SVC-PROXY-KEY is added). */
export interface ProxyCall {
  method?: string;
  /** Appended to `/proxy` ('/v1/charges'); default none. */
  path?: string;
  headers?: Record<string, string>;
  /** An object or array is sent as JSON; a string or Buffer as it is. */
  body?: unknown;
  /**
   * The caller's API key (SVC-API-KEY): default the tenant's private key; `null` calls without one
   * (a proxy that does not require auth). A `svc-api-key` in `headers` wins.
   */
  key?: string | null;
}

/** What a tenant shares with the run that made it. */
export interface TenantContext {
  url: string;
  tenants: EmulatorTenants;
  agent: Agent;
  logs: ConsoleLines;
  receiver: WebhookReceiver;
  /** Every tenant's destination mocks (one interceptor on the emulator's outbound gateway). */
  mocks: DestinationMocks;
  /** The emulator's outbound gateway (a tenant's recordings and replays attach there). */
  outbound: EmulatorOutbound;
  /** True once the run was told to stop: its tenants go with the emulator, and a dispose has nothing to do. */
  stopped(): boolean;
}

/** Keys by name: the tenant's two starter Applications, and one per Application of svc.yaml. */
export type TenantKeys = Record<string, string> & { management: string; private: string };

/**
 * One test's own platform: a tenant forked from the run's template, with the same Applications (keys
 * of its own), reactors and proxies, and none of another test's tokens, results or events.
 */
export class SvcTenant {
  readonly id: string;
  readonly url: string;
  readonly keys: TenantKeys;
  /** The project's typed API client, bound to this tenant (management and private keys). */
  readonly client: ApiClient;
  /** The tenant's clock: real time until `advance` or `set` moves it (this tenant's time only). */
  readonly clock: TenantClock;
  /** Destinations mocked inside the emulator for this tenant, and what was sent to them. */
  readonly destinations: TenantDestinations;
  readonly reactors: {
    /**
     * Invokes a reactor with the tenant's private key. With `callbackUrl` (Enterprise), it answers
     * 202 at once and the result is delivered there: `settle()` waits for it.
     */
    invoke(name: string, args?: Record<string, unknown>, options?: InvokeOptions): Promise<CallResult>;
  };
  readonly proxies: { invoke(name: string, call?: ProxyCall): Promise<CallResult> };
  readonly webhooks: {
    /** A callback URL whose deliveries (signature checked) `received()` lists; `reply` sets the answer's status. */
    receiver(reply?: WebhookReply): Promise<string>;
    /** The verified deliveries to this tenant's receivers so far, attempts in the order they came. */
    received(): ReceivedWebhook[];
  };
  private readonly receivers: { url: string; inbox: { received: ReceivedWebhook[] } }[] = [];
  private disposing: Promise<void> | undefined;

  constructor(
    private readonly context: TenantContext,
    forked: ForkedTenant,
  ) {
    this.id = forked.id;
    this.url = context.url;
    this.clock = new TenantClock(context.tenants.clock(forked.id));
    this.destinations = new TenantDestinations(context.mocks.tenant(this.id), {
      tenantId: this.id,
      use: (interceptor) => context.outbound.use(interceptor),
    });
    const byName: Record<string, string> = {};
    const starters = new Set([forked.management_key, forked.private_key]);
    for (const app of forked.applications) if (!starters.has(app.key)) byName[app.name] = app.key;
    this.keys = { ...byName, management: forked.management_key, private: forked.private_key };
    this.client = new ApiClient({
      baseUrl: context.url,
      managementKey: this.keys.management,
      apiKey: this.keys.private,
    });
    const reactorIds = new Map(forked.reactors.map((reactor) => [reactor.name, reactor.id]));
    const proxies = new Map(forked.proxies.map((proxy) => [proxy.name, proxy]));
    this.reactors = {
      invoke: (name, args = {}, options = {}) => {
        const id = reactorIds.get(name);
        if (id === undefined) return Promise.reject(unknownName('reactor', name, reactorIds.keys()));
        const headers = { [API_KEY_HEADER]: options.key ?? this.keys.private, 'content-type': JSON_CONTENT_TYPE };
        const body = {
          args,
          ...(options.callbackUrl !== undefined && { callback_url: options.callbackUrl }),
          ...(options.timeoutMs !== undefined && { timeout_ms: options.timeoutMs }),
        };
        return this.call('POST', `/reactors/${id}/react`, headers, JSON.stringify(body));
      },
    };
    this.proxies = {
      invoke: (name, call = {}) => {
        const proxy = proxies.get(name);
        if (proxy === undefined) return Promise.reject(unknownName('proxy', name, proxies.keys()));
        return this.call(call.method ?? 'GET', `/proxy${call.path ?? ''}`, ...proxyRequest(proxy.key, this.keys, call));
      },
    };
    this.webhooks = {
      receiver: async (reply) => {
        const secret = await context.tenants.webhookSecret(this.id);
        const opened = await context.receiver.open(secret, reply);
        this.receivers.push(opened);
        return opened.url;
      },
      received: () => this.receivers.flatMap((receiver) => receiver.inbox.received),
    };
    context.logs.watch(this.id);
  }

  /** Resolves once every asynchronous invocation, webhook delivery and retry of the tenant has ended. */
  settle(): Promise<void> {
    return this.context.tenants.settled(this.id);
  }

  /**
   * Deletes the tenant and all it holds, its code unloaded; safe to call more than once. A failure
   * of the delete is passed on; once the svc is stopped, the tenant went with it and this does nothing.
   */
  dispose(): Promise<void> {
    this.disposing ??= (async () => {
      this.context.logs.forget(this.id);
      this.context.mocks.forget(this.id);
      // Cassettes are written before the tenant goes; a refused one fails the dispose once the rest is done.
      const recorded = this.destinations.closeRecordings().then(
        () => undefined,
        (error: unknown) => error,
      );
      for (const receiver of this.receivers) this.context.receiver.close(receiver.url);
      if (!this.context.stopped())
        try {
          await this.context.tenants.delete(this.id);
        } catch (error) {
          // The svc stopped meanwhile: the emulator refuses the delete, as the tenant is going anyway.
          if (!this.context.stopped()) throw error;
        }
      const refused = await recorded;
      if (refused !== undefined) throw refused;
    })();
    return this.disposing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  private async call(
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: string | Buffer,
  ): Promise<CallResult> {
    const answer = await send(this.context.agent, new URL(this.url + path), method, headers, body);
    const traceId = answer.headers[TRACE_HEADER];
    return { ...answer, logs: this.context.logs.take(this.id, traceId), traceId };
  }
}

function proxyRequest(
  key: string,
  keys: TenantKeys,
  call: ProxyCall,
): [headers: Record<string, string>, body: string | Buffer | undefined] {
  const headers: Record<string, string> = { [PROXY_KEY_HEADER]: key };
  const callerKey = call.key === undefined ? keys.private : call.key;
  if (callerKey !== null) headers[API_KEY_HEADER] = callerKey;
  for (const [name, value] of Object.entries(call.headers ?? {})) headers[name.toLowerCase()] = value;
  let body: string | Buffer | undefined;
  if (typeof call.body === 'string' || Buffer.isBuffer(call.body)) body = call.body;
  else if (call.body !== undefined) {
    body = JSON.stringify(call.body);
    headers['content-type'] ??= JSON_CONTENT_TYPE;
  }
  return [headers, body];
}

function unknownName(kind: string, name: string, known: Iterable<string>): Error {
  const names = [...known];
  return new Error(
    `svc/testing: no ${kind} named "${name}" in svc.yaml (${names.length > 0 ? `there are: ${names.join(', ')}` : `it has no ${kind}`}).`,
  );
}
