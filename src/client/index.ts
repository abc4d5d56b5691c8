import { API_KEY_HEADER, JSON_CONTENT_TYPE, MERGE_PATCH_CONTENT_TYPE, TRANSACTION_HEADER } from '../api/headers.js';
import { MAX_PAGE_SIZE } from '../api/limits.js';
import { problemFromAnswer } from '../api/problem.js';
import type {
  Application,
  InvokeReactorBody,
  Proxy,
  ProxyBody,
  Reactor,
  ReactorBody,
  ReactorResponse,
  ReactorResult,
  CreateApplicationBody,
  CreateTokenBody,
  ListQuery,
  Page,
  Token,
  TokenListQuery,
  Transaction,
  UpdateApplicationBody,
} from '../api/types.js';
import { ApiError, ConnectionError } from './errors.js';

export { ApiError, ConnectionError } from './errors.js';

/** Which key a call needs: management work, or token and invoke work (spec section 5). */
export type KeyKind = 'management' | 'api';

export interface ClientOptions {
  baseUrl: string;
  managementKey?: string;
  apiKey?: string;
  /** Raised when a call needs a key that was not given. */
  missingKey?: (kind: KeyKind) => Error;
}

export interface RequestOptions {
  key?: KeyKind | 'none';
  body?: unknown;
  query?: Record<string, string | number | readonly string[] | undefined>;
  headers?: Record<string, string>;
  /** Content-Type of the JSON body (default application/json). */
  contentType?: string;
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

  constructor(private readonly options: ClientOptions) {
    this.applications = new ApplicationsApi(this);
    this.tokens = new TokensApi(this);
    this.transactions = new TransactionsApi(this);
    this.reactors = new ReactorsApi(this);
    this.proxies = new ProxiesApi(this);
  }

  /** The emulator's webhook signing secret for the management key's tenant. */
  async webhookSecret(): Promise<string> {
    return (await this.request<{ secret: string }>('GET', '/_emulator/webhook-secret')).secret;
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

    const response = await this.send(url, { method, headers, body });
    const text = await response.text();
    const parsed = parseJson(text);
    if (response.status >= 400) throw new ApiError(response.status, problemFromAnswer(response.status, parsed, text));
    return (text === '' ? undefined : parsed ?? text) as T;
  }

  /**
   * A request whose answer is returned whatever its status (proxy invocation: the destination's
   * own 4xx and 5xx are results, not errors). Only a connection failure throws.
   */
  async raw(method: string, path: string, options: { headers: Record<string, string>; body?: string | Buffer | undefined; key?: KeyKind | 'none' }): Promise<RawResponse> {
    const headers = { ...options.headers };
    if (options.key !== undefined && options.key !== 'none') headers[API_KEY_HEADER] = this.key(options.key);
    const response = await this.send(new URL(this.options.baseUrl + path), { method, headers, body: options.body });
    const received: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      received[name] = value;
    });
    return { status: response.status, headers: received, text: await response.text() };
  }

  private async send(url: URL, init: { method: string; headers: Record<string, string>; body: string | Buffer | undefined }): Promise<Response> {
    try {
      return await fetch(url, { method: init.method, headers: init.headers, ...(init.body !== undefined && { body: init.body }), redirect: 'manual' });
    } catch (error) {
      // fetch wraps the network error: the code (ECONNREFUSED...) is on its cause.
      const cause = (error as Error & { cause?: NodeJS.ErrnoException }).cause;
      throw new ConnectionError(this.options.baseUrl, cause?.code, cause?.message ?? (error as Error).message);
    }
  }

  private key(kind: KeyKind): string {
    const key = kind === 'management' ? this.options.managementKey : this.options.apiKey;
    if (key === undefined) throw this.options.missingKey?.(kind) ?? new Error(`no ${kind} key`);
    return key;
  }
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Spec section 4.1. */
export class ApplicationsApi {
  constructor(private readonly client: ApiClient) {}

  list(query: ListQuery = {}): Promise<Page<Application>> {
    return this.client.request('GET', '/applications', { query: { page: query.page, size: query.size, id: query.id } });
  }

  get(id: string): Promise<Application> {
    return this.client.request('GET', `/applications/${encodeURIComponent(id)}`);
  }

  /** The Application that owns the management key in use. */
  self(): Promise<Application> {
    return this.client.request('GET', '/applications/key');
  }

  create(body: CreateApplicationBody): Promise<Application> {
    return this.client.request('POST', '/applications', { body });
  }

  update(id: string, body: UpdateApplicationBody): Promise<Application> {
    return this.client.request('PUT', `/applications/${encodeURIComponent(id)}`, { body });
  }

  regenerate(id: string): Promise<Application> {
    return this.client.request('POST', `/applications/${encodeURIComponent(id)}/regenerate`);
  }

  delete(id: string): Promise<void> {
    return this.client.request('DELETE', `/applications/${encodeURIComponent(id)}`);
  }

  /** Every page of the list, for resolving names. */
  all(): Promise<Application[]> {
    return everyPage((page) => this.list({ page, size: MAX_PAGE_SIZE }));
  }
}

/** Walks a paginated list to its end. */
async function everyPage<T>(fetchPage: (page: number) => Promise<Page<T>>): Promise<T[]> {
  const items: T[] = [];
  for (let page = 1; ; page++) {
    const result = await fetchPage(page);
    items.push(...result.data);
    if (result.data.length === 0 || page >= result.pagination.total_pages) return items;
  }
}

/** Spec section 4.4: management calls use the management key, invocation the API key. */
export class ReactorsApi {
  constructor(private readonly client: ApiClient) {}

  list(query: ListQuery = {}): Promise<Page<Reactor>> {
    return this.client.request('GET', '/reactors', { query: { page: query.page, size: query.size, id: query.id, name: query.name } });
  }

  all(): Promise<Reactor[]> {
    return everyPage((page) => this.list({ page, size: MAX_PAGE_SIZE }));
  }

  get(id: string): Promise<Reactor> {
    return this.client.request('GET', `/reactors/${encodeURIComponent(id)}`);
  }

  create(body: ReactorBody): Promise<Reactor> {
    return this.client.request('POST', '/reactors', { body });
  }

  update(id: string, body: ReactorBody): Promise<Reactor> {
    return this.client.request('PUT', `/reactors/${encodeURIComponent(id)}`, { body });
  }

  /** An RFC 7386 merge patch; the API answers 204. */
  patch(id: string, patch: Record<string, unknown>): Promise<void> {
    return this.client.request('PATCH', `/reactors/${encodeURIComponent(id)}`, { body: patch, contentType: MERGE_PATCH_CONTENT_TYPE });
  }

  delete(id: string): Promise<void> {
    return this.client.request('DELETE', `/reactors/${encodeURIComponent(id)}`);
  }

  /** 200 with the reactor response, or (with callback_url) 202 `{ id, status: 'pending' }`. */
  invoke(id: string, body: InvokeReactorBody, transaction?: string): Promise<ReactorResponse | { id: string; status: 'pending' }> {
    return this.client.request('POST', `/reactors/${encodeURIComponent(id)}/react`, {
      key: 'api',
      body,
      ...(transaction !== undefined && { headers: { [TRANSACTION_HEADER]: transaction } }),
    });
  }

  result(id: string, requestId: string): Promise<ReactorResult> {
    return this.client.request('GET', `/reactors/${encodeURIComponent(id)}/results/${encodeURIComponent(requestId)}`, { key: 'api' });
  }
}

/** Token calls use the API key; `transaction` sends `SVC-TRANSACTION-ID`. */
export class TokensApi {
  constructor(private readonly client: ApiClient) {}

  private options(transaction: string | undefined, rest: RequestOptions = {}): RequestOptions {
    return { key: 'api', ...rest, ...(transaction !== undefined && { headers: { [TRANSACTION_HEADER]: transaction } }) };
  }

  create(body: CreateTokenBody, transaction?: string): Promise<Token> {
    return this.client.request('POST', '/tokens', this.options(transaction, { body }));
  }

  get(id: string, transaction?: string): Promise<Token> {
    return this.client.request('GET', `/tokens/${encodeURIComponent(id)}`, this.options(transaction));
  }

  list(query: TokenListQuery = {}, transaction?: string): Promise<Page<Token>> {
    const { page, size, id, container, type } = query;
    return this.client.request('GET', '/tokens', this.options(transaction, { query: { page, size, id, container, type } }));
  }

  delete(id: string, transaction?: string): Promise<void> {
    return this.client.request('DELETE', `/tokens/${encodeURIComponent(id)}`, this.options(transaction));
  }

  tokenize(value: unknown, transaction?: string): Promise<unknown> {
    return this.client.request('POST', '/tokenize', this.options(transaction, { body: value }));
  }

  detokenize(value: unknown): Promise<unknown> {
    return this.client.request('POST', '/detokenize', this.options(undefined, { body: value }));
  }
}

/** Spec section 4.2; any valid key will do, the API key is used. */
export class TransactionsApi {
  constructor(private readonly client: ApiClient) {}

  create(): Promise<Transaction> {
    return this.client.request('POST', '/transactions', { key: 'api' });
  }

  get(id: string): Promise<Transaction> {
    return this.client.request('GET', `/transactions/${encodeURIComponent(id)}`, { key: 'api' });
  }

  commit(id: string): Promise<void> {
    return this.client.request('POST', `/transactions/${encodeURIComponent(id)}/commit`, { key: 'api' });
  }

  rollback(id: string): Promise<void> {
    return this.client.request('POST', `/transactions/${encodeURIComponent(id)}/rollback`, { key: 'api' });
  }
}

/** Spec section 4.3 (management calls; invocation goes through `ApiClient.raw`). */
export class ProxiesApi {
  constructor(private readonly client: ApiClient) {}

  list(query: ListQuery = {}): Promise<Page<Proxy>> {
    return this.client.request('GET', '/proxies', { query: { page: query.page, size: query.size, id: query.id, name: query.name } });
  }

  all(): Promise<Proxy[]> {
    return everyPage((page) => this.list({ page, size: MAX_PAGE_SIZE }));
  }

  get(id: string): Promise<Proxy> {
    return this.client.request('GET', `/proxies/${encodeURIComponent(id)}`);
  }

  create(body: ProxyBody): Promise<Proxy> {
    return this.client.request('POST', '/proxies', { body });
  }

  update(id: string, body: ProxyBody): Promise<Proxy> {
    return this.client.request('PUT', `/proxies/${encodeURIComponent(id)}`, { body });
  }

  patch(id: string, patch: Record<string, unknown>): Promise<void> {
    return this.client.request('PATCH', `/proxies/${encodeURIComponent(id)}`, { body: patch, contentType: MERGE_PATCH_CONTENT_TYPE });
  }

  delete(id: string): Promise<void> {
    return this.client.request('DELETE', `/proxies/${encodeURIComponent(id)}`);
  }
}
