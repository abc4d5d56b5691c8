/** What the store holds: wire objects plus the fields that never leave the emulator. */
import type {
  Application,
  ReactorResult,
  TokenType,
  TransactionStatus,
  WebhookAttempt,
  WebhookDelivery,
} from '../../api/types.js';
import type { Sealed } from '../crypto/cipher.js';

/**
 * A tenant as the store holds it: its name, its bootstrap Applications, its sealed webhook secret
 * and, for a fork, its template. (Not a TenantRecord: that is any record a tenant owns.)
 */
export interface StoredTenant {
  id: string;
  /** A tenant is its own owner, so the tenant collection is keyed like every other. */
  tenant_id: string;
  name: string;
  created_at: string;
  /** Ids of the Applications created at bootstrap, so given keys can be re-applied on restart. */
  bootstrap?: { management?: string; private?: string };
  /** The webhook signing secret, sealed with the master key. */
  webhook_secret?: Sealed;
  /**
   * Whose sandbox processes run the tenant's code: its own (absent), or for a fork (svc/testing)
   * its template's, each version still in a Compartment of its own (docs/sandbox.md).
   */
  sandbox_group?: string;
}

export interface ReactorRecord {
  id: string;
  tenant_id: string;
  name: string;
  code: string;
  /** The configuration map, sealed: it holds third-party API keys (services/configuration.ts). */
  configuration_sealed: Sealed;
  application_id: string | null;
  created_by?: string;
  created_at: string;
  modified_by?: string;
  modified_at: string;
}

/**
 * An asynchronous invocation, its outcome and its webhook's delivery: kept for polling, and so that
 * a delivery pending when the emulator stops resumes when it starts again.
 */
export interface ReactorResultRecord extends Omit<ReactorResult, 'raw' | 'tokens' | 'error' | 'delivery'> {
  tenant_id: string;
  /** `{ raw, tokens, error }`, sealed: a result can hold detokenized data. */
  outcome?: Sealed;
  created_at: string;
  callback_url: string;
  delivery: DeliveryRecord;
}

export interface DeliveryRecord extends WebhookDelivery {
  /** While pending: not before this time (the backoff after a failed attempt), so a restart keeps it. */
  next_attempt_at?: string;
  /** When the delivery ended (delivered or failed): the retention counts from here. */
  ended_at?: string;
  /** The last attempts (at most 20), each with its time: what `svc webhooks list` shows. */
  history?: WebhookAttempt[];
}

export interface ApplicationRecord extends Omit<Application, 'key'> {
  created_at: string;
  /** SHA-256 (hex) of the key; the key itself is never stored. */
  key_hash: string;
}

export interface TokenRecord {
  id: string;
  tenant_id: string;
  type: TokenType;
  containers: string[];
  metadata: Record<string, string>;
  created_by?: string;
  created_at: string;
  expires_at: string | null;
  /** `{ data, mask }`, sealed with AES-256-GCM: the store never holds token data in plaintext. */
  secret: Sealed;
}

/** A token write held by an open transaction until commit. */
export type StagedOp = { op: 'put'; record: TokenRecord } | { op: 'delete'; id: string };

export interface TransactionRecord {
  id: string;
  tenant_id: string;
  created_by: string;
  created_at: string;
  expires_at: string;
  status: TransactionStatus;
  ended_at?: string;
  staged: StagedOp[];
}

export interface ProxyRecord {
  id: string;
  tenant_id: string;
  name: string;
  /** SHA-256 of the proxy key, for finding the proxy an invocation names. */
  key_hash: string;
  /** The key itself, sealed: the API returns it, the data file never holds it in plaintext. */
  key_sealed: Sealed;
  destination_url: string;
  request_transform: { code: string } | null;
  response_transform: { code: string } | null;
  application_id: string | null;
  /** The configuration map (or null), sealed like a reactor's. */
  configuration_sealed: Sealed;
  require_auth: boolean;
  created_by?: string;
  created_at: string;
  modified_by?: string;
  modified_at: string;
}
