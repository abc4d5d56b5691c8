/** Wire types of the platform API (snake_case, as on the wire). */
import type { ApplicationType, RuleTransform } from './permissions.js';

export interface Condition {
  attribute: 'id' | 'container';
  operator: 'starts_with' | 'equals';
  value: string;
}

export interface AccessRule {
  description?: string;
  priority: number;
  container?: string;
  conditions?: Condition[];
  transform: RuleTransform;
  permissions: string[];
}

export interface Application {
  id: string;
  tenant_id: string;
  name: string;
  /** Present only in the responses to create and regenerate. */
  key?: string;
  type: ApplicationType;
  permissions: string[];
  rules: AccessRule[];
  created_by?: string;
  created_at?: string;
  modified_by?: string;
  modified_at?: string;
  expires_at?: string | null;
}

export interface CreateApplicationBody {
  name: string;
  type: ApplicationType;
  permissions?: string[];
  rules?: AccessRule[];
  expires_at?: string | null;
}

export interface UpdateApplicationBody {
  name: string;
  permissions?: string[];
  rules?: AccessRule[];
}

export interface Pagination {
  total_items: number;
  page_number: number;
  page_size: number;
  total_pages: number;
}

export interface Page<T> {
  pagination: Pagination;
  data: T[];
}

export interface ListQuery {
  page?: number | undefined;
  size?: number | undefined;
  id?: string[] | undefined;
  name?: string | undefined;
}

/** The answer of the emulator's loopback-only `POST /_emulator/tenants`. */
export interface CreatedTenant {
  id: string;
  name: string;
  created_at: string;
  management_key: string;
  private_key: string;
}

/** A tenant forked from another (`POST /_emulator/tenants/{id}/forks`, svc/testing): its keys (shown once), and the ids of what it got, by name. */
export interface ForkedTenant {
  id: string;
  name: string;
  created_at: string;
  /** The fork's own starter Applications' keys. */
  management_key: string;
  private_key: string;
  /** Every Application copied (the starters included), each with a key of its own. */
  applications: { id: string; name: string; type: string; key: string }[];
  reactors: { id: string; name: string }[];
  /** Each proxy with a key of its own. */
  proxies: { id: string; name: string; key: string }[];
}

export const TOKEN_TYPES = ['token', 'card', 'bank'] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];

export interface CardData {
  number: string;
  expiration_month: number;
  expiration_year: number;
  cvc?: string;
}

export interface BankData {
  routing_number: string;
  account_number: string;
}

/** A token as the API returns it; `data` is present, masked or absent as the caller's access decides. */
export interface Token {
  id: string;
  tenant_id: string;
  type: TokenType;
  data?: unknown;
  containers: string[];
  metadata: Record<string, string>;
  created_by?: string;
  created_at: string;
  expires_at: string | null;
}

export interface CreateTokenBody {
  id?: string;
  type: TokenType;
  data: unknown;
  containers?: string[];
  metadata?: Record<string, string>;
  mask?: unknown;
  expires_at?: string | null;
  /** Taken, not acted on: svc computes no fingerprint. */
  fingerprint_expression?: string | null;
  /** Taken, not acted on: svc deduplicates nothing. */
  deduplicate_token?: boolean | null;
  /** Taken, not acted on: svc has no token search. */
  search_indexes?: string[] | null;
}

export interface TokenListQuery extends ListQuery {
  container?: string | undefined;
  type?: TokenType | undefined;
}

export type TransactionStatus = 'open' | 'committed' | 'rolled_back' | 'expired';

export interface Transaction {
  id: string;
  created_at: string;
  created_by: string;
  expires_at: string;
  status: TransactionStatus;
}

/** A reactor as the API returns it; `application` is the bound Application (without key), or null. */
export interface Reactor {
  id: string;
  tenant_id: string;
  name: string;
  code: string;
  configuration: Record<string, string>;
  application: Application | null;
  created_by?: string;
  created_at: string;
  modified_by?: string;
  modified_at: string;
}

export interface ReactorBody {
  name: string;
  code: string;
  configuration: Record<string, string>;
  application?: { id: string } | null;
}

export interface InvokeReactorBody {
  args?: Record<string, unknown> | null;
  callback_url?: string | null;
  timeout_ms?: number | null;
}

/** What a completed reactor answers: `raw` as returned, `tokens` from its `tokenize` block. */
export interface ReactorResponse {
  raw?: unknown;
  tokens?: unknown;
}

/** An asynchronous invocation's outcome: the body of its webhook (the same bytes on every attempt). */
export interface ReactorEvent extends ReactorResponse {
  id: string;
  reactor_id: string;
  /** The execution: `completed` says the code ran, not that anyone heard of it (see `delivery`). */
  status: 'pending' | 'completed' | 'failed';
  error?: import('./problem.js').Problem;
  started_at: string;
  completed_at?: string;
}

/** Where the webhook of an asynchronous invocation stands, apart from the execution. */
export interface WebhookDelivery {
  /** `pending` until a 2xx (`delivered`), or until the attempts run out or the receiver answers 410 (`failed`). */
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  /** The receiver's HTTP status at the last attempt; null before the first, or when it could not be reached. */
  last_status: number | null;
  /** Why the last attempt got no HTTP answer (refused, timed out). */
  last_error?: string;
  /** The `SVC-WEBHOOK-ID` every attempt of this event carries, for receivers to drop repeats. */
  event_id: string;
}

/** One attempt of a webhook delivery: its HTTP status, or why it got none; `resend` for one asked for. */
export interface WebhookAttempt {
  attempt: number;
  at: string;
  status: number | null;
  error?: string;
  resend?: true;
}

/** One webhook delivery as `GET /_emulator/webhooks` lists it (answer-schemas.ts webhookDeliverySchema). */
export interface WebhookDeliveryEntry extends WebhookDelivery {
  /** The asynchronous invocation's id (its result's `id`): what `svc webhooks resend` takes. */
  id: string;
  reactor_id: string;
  /** The reactor's name, null once it is deleted. */
  reactor: string | null;
  /** Without the credentials, query string or fragment it may carry. */
  callback_url: string;
  next_attempt_at?: string;
  created_at: string;
  /** The last attempts (at most 20), oldest first. */
  attempt_log: WebhookAttempt[];
}

/** An asynchronous invocation as polled: the event, and its delivery. */
export interface ReactorResult extends ReactorEvent {
  delivery: WebhookDelivery;
}

export interface ProxyTransform {
  code: string;
}

/** A pre-configured proxy as the API returns it. */
export interface Proxy {
  id: string;
  tenant_id: string;
  name: string;
  key: string;
  destination_url: string;
  request_transform: ProxyTransform | null;
  response_transform: ProxyTransform | null;
  application_id: string | null;
  configuration: Record<string, string> | null;
  require_auth: boolean;
  created_by?: string;
  created_at: string;
  modified_by?: string;
  modified_at: string;
}

export interface ProxyBody {
  name: string;
  destination_url: string;
  request_transform?: ProxyTransform | null;
  response_transform?: ProxyTransform | null;
  application?: { id: string } | null;
  configuration?: Record<string, string> | null;
  require_auth?: boolean;
}
