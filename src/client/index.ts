import type { EmulatorEvent } from '../api/events.js';
import type { CreatedTenant, ForkedTenant } from '../api/types.js';
import { API_KEY_HEADER, JSON_CONTENT_TYPE } from '../api/headers.js';
import { isProblem, problemFromAnswer } from '../api/problem.js';
import { ApplicationsApi } from './applications.js';
import { ApiError, ConnectionError, UnexpectedResponseError } from './errors.js';
import { ExplanationsApi } from './explanations.js';
import type { EventStreamOptions } from './event-stream.js';
import type { PlainResponse } from './plain-request.js';
import { ProxiesApi } from './proxies.js';
import { ReactorsApi } from './reactors.js';
import { ReplayApi } from './replay.js';
import { StateApi } from './state.js';
import { WebhookDeliveriesApi } from './webhooks.js';
import type { KeyKind, RequestOptions } from './requester.js';
import { TokensApi } from './tokens.js';
import { TransactionsApi } from './transactions.js';

export { ApiError, ConnectionError, UnexpectedResponseError } from './errors.js';
export { ApplicationsApi } from './applications.js';
export { ExplanationsApi, ExplanationsUnavailableError } from './explanations.js';
export { ProxiesApi } from './proxies.js';
export { ReactorsApi } from './reactors.js';
export { ReplayApi, ReplayUnavailableError } from './replay.js';
export { StateApi } from './state.js';
export { WebhookDeliveriesApi, type DeliveryListQuery } from './webhooks.js';
export type { KeyKind, RequestOptions } from './requester.js';
export { TokensApi } from './tokens.js';
export { TransactionsApi } from './transactions.js';

/** A tenant of the emulator as its admin route lists it: never a key. */
export interface TenantSummary {
  id: string;
  name: string;
  created_at: string;
  /** The tenant `svc serve` bootstrapped (the one its credentials file holds the keys of). */
  bootstrap: boolean;
}

export interface ClientOptions {
  baseUrl: string;
  managementKey?: string;
  apiKey?: string;
  /** Raised when a call needs a key that was not given. */
  missingKey?: (kind: KeyKind) => Error;
  /** Told of each request as it starts (the CLI's spinner); the function it returns is called when it ends. */
  onRequest?: (label: string) => () => void;
}

/**
 * The one HTTP client of the platform API. Used by the CLI (and later `svc apply`) against the
 * emulator or a remote server alike. It speaks through Node's built-in fetch, which is undici
 * bundled with Node: a CLI command makes a request or two, and importing the undici package costs
 * ~110 ms of start-up against ~30 ms for the bundled one (the proxy forwarder, which needs Pool
 * throughput, uses the package).
 */
export class ApiClient {
  readonly applications: ApplicationsApi;
  readonly tokens: TokensApi;
  readonly transactions: TransactionsApi;
  readonly reactors: ReactorsApi;
  readonly proxies: ProxiesApi;
  readonly explanations: ExplanationsApi;
  readonly replay: ReplayApi;
  readonly state: StateApi;
  readonly webhookDeliveries: WebhookDeliveriesApi;

  constructor(private readonly options: ClientOptions) {
    this.applications = new ApplicationsApi(this);
    this.tokens = new TokensApi(this);
    this.transactions = new TransactionsApi(this);
    this.reactors = new ReactorsApi(this);
    this.proxies = new ProxiesApi(this);
    this.explanations = new ExplanationsApi(this, options.baseUrl);
    this.replay = new ReplayApi(this, options.baseUrl);
    this.state = new StateApi(this);
    this.webhookDeliveries = new WebhookDeliveriesApi(this);
  }

  /**
   * A new tenant of the emulator, with its own management and private Applications, and their keys
   * (`POST /_emulator/tenants`: no key; the emulator answers callers on loopback only).
   */
  createTenant(body: { name?: string; management_key?: string; private_key?: string } = {}): Promise<CreatedTenant> {
    return this.request<CreatedTenant>('POST', '/_emulator/tenants', { key: 'none', body, shape: 'object' });
  }

  /**
   * A fork of tenant `tenantId` (`POST /_emulator/tenants/{id}/forks`, with its management key:
   * the client's), and the keys of all it copied.
   */
  forkTenant(tenantId: string, body: { name?: string } = {}): Promise<ForkedTenant> {
    return this.request<ForkedTenant>('POST', `/_emulator/tenants/${encodeURIComponent(tenantId)}/forks`, {
      body,
      shape: 'object',
    });
  }

  /** The emulator's tenants, the bootstrapped one first (`GET /_emulator/tenants`: no key, loopback only). */
  async tenants(): Promise<TenantSummary[]> {
    return (await this.request<{ data: TenantSummary[] }>('GET', '/_emulator/tenants', { key: 'none' })).data;
  }

  /** The emulator's webhook signing secret for the management key's tenant. */
  async webhookSecret(): Promise<string> {
    return (await this.request<{ secret: string }>('GET', '/_emulator/webhook-secret')).secret;
  }

  /**
   * The emulator's events for the management key's tenant (`GET /_emulator/events`): the recent ones,
   * then, with `follow`, each new one until `signal` aborts or the server ends the stream (or sends
   * nothing for `options.silenceMs`: EventStreamSilentError).
   */
  async *events(
    query: Record<string, string | undefined>,
    signal: AbortSignal,
    options: EventStreamOptions = {},
  ): AsyncGenerator<EmulatorEvent> {
    const url = new URL(`${this.options.baseUrl}/_emulator/events`);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, value);
    const { readEventStream } = await import('./event-stream.js');
    yield* readEventStream(url, this.key('management'), signal, options);
  }

  /**
   * `GET /health`: whether the server answers, and its version when it says (the emulator does).
   * A 503 that says its status (`unavailable`: the emulator's store cannot write) still answers.
   */
  async health(signal?: AbortSignal): Promise<{ status: string; version?: string }> {
    const url = new URL(`${this.options.baseUrl}/health`);
    const init = { method: 'GET', headers: { accept: 'application/json' }, body: undefined, signal };
    const { response, text } = await this.send(url, init);
    const parsed = parseJson(text) as { status?: unknown; version?: unknown } | undefined;
    if ((response.status !== 200 && response.status !== 503) || typeof parsed?.status !== 'string') {
      throw new UnexpectedResponseError(
        this.options.baseUrl,
        response.status,
        response.headers.get('content-type') ?? '',
      );
    }
    return { status: parsed.status, ...(typeof parsed.version === 'string' && { version: parsed.version }) };
  }

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const url = new URL(this.options.baseUrl + path);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value === undefined) continue;
      for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(item));
    }
    const headers: Record<string, string> = { accept: JSON_CONTENT_TYPE, ...options.headers };
    const kind = options.key ?? 'management';
    if (kind !== 'none') headers[API_KEY_HEADER] = this.key(kind);
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = options.contentType ?? JSON_CONTENT_TYPE;
    }

    const { response, text } = await this.send(url, { method, headers, body });
    const type = response.headers.get('content-type') ?? '';
    const json = /^application\/([a-z.+-]+\+)?json\b/i.test(type);
    const parsed = json ? parseJson(text) : undefined;
    if (response.status >= 400) {
      const context = kind === 'none' ? {} : { key: kind };
      // An error page of some other server (HTML, a proxy's text) says nothing the svc API would say.
      if (!json && !isProblem(parsed)) throw new UnexpectedResponseError(this.options.baseUrl, response.status, type);
      throw new ApiError(response.status, problemFromAnswer(response.status, parsed, text), context);
    }
    if (text === '') return undefined as T;
    if (!json || parsed === undefined || (options.shape !== undefined && !hasShape(parsed, options.shape))) {
      throw new UnexpectedResponseError(this.options.baseUrl, response.status, type);
    }
    return parsed as T;
  }

  /**
   * A request whose answer is returned whatever its status (proxy invocation: the destination's
   * own 4xx and 5xx are results, not errors). Only a connection failure throws. It sends only the
   * headers given (a proxy forwards them), so it is a plain node:http request rather than fetch.
   */
  async raw(
    method: string,
    path: string,
    options: { headers: Record<string, string>; body?: string | Buffer | undefined; key?: KeyKind | 'none' },
  ): Promise<PlainResponse> {
    const headers = { ...options.headers };
    if (options.key !== undefined && options.key !== 'none') headers[API_KEY_HEADER] = this.key(options.key);
    const { plainRequest } = await import('./plain-request.js');
    const url = new URL(this.options.baseUrl + path);
    // The request target as typed: URL would resolve `..` and `.` segments, and the server judges those.
    const base = new URL(this.options.baseUrl).pathname.replace(/\/$/, '');
    const target = `${base}${path}`.replace(/[^\x21-\x7e]/g, (char) => encodeURIComponent(char));
    const done = this.started(method, url);
    try {
      return await plainRequest(url, method, headers, options.body, target);
    } catch (error) {
      const { code, message } = error as NodeJS.ErrnoException;
      throw new ConnectionError(this.options.baseUrl, code, message);
    } finally {
      done();
    }
  }

  private started(method: string, url: URL): () => void {
    return this.options.onRequest?.(`${method} ${url.host}`) ?? (() => {});
  }

  /** One request, its answer read whole. */
  private async send(
    url: URL,
    init: {
      method: string;
      headers: Record<string, string>;
      body: string | Buffer | undefined;
      signal?: AbortSignal | undefined;
    },
  ): Promise<{ response: Response; text: string }> {
    const done = this.started(init.method, url);
    try {
      const response = await fetch(url, {
        method: init.method,
        headers: init.headers,
        ...(init.body !== undefined && { body: init.body }),
        ...(init.signal && { signal: init.signal }),
        redirect: 'manual',
      });
      return { response, text: await response.text() };
    } catch (error) {
      // fetch wraps the network error: the code (ECONNREFUSED...) is on its cause.
      const cause = (error as Error & { cause?: NodeJS.ErrnoException }).cause;
      throw new ConnectionError(this.options.baseUrl, cause?.code, cause?.message ?? (error as Error).message);
    } finally {
      done();
    }
  }

  private key(kind: KeyKind): string {
    const key = kind === 'management' ? this.options.managementKey : this.options.apiKey;
    if (key === undefined) throw this.options.missingKey?.(kind) ?? new Error(`no ${kind} key`);
    return key;
  }
}

export type { PlainResponse as RawResponse } from './plain-request.js';

function hasShape(value: unknown, shape: 'page' | 'object'): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  if (shape === 'object') return true;
  const page = value as { data?: unknown; pagination?: unknown };
  return Array.isArray(page.data) && typeof page.pagination === 'object' && page.pagination !== null;
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
