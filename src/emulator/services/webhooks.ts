import { createHmac, timingSafeEqual } from 'node:crypto';
import { EmulatorError } from '../errors.js';
import type { Store } from '../store/store.js';
import type { TenantRow } from '../store/records.js';
import type { Cipher } from './cipher.js';
import { randomBase58 } from './keys.js';

export const SIGNATURE_HEADER = 'svc-signature';

export interface WebhookOptions {
  /** Attempts in all, the first included. Default 6. */
  attempts?: number;
  /** Delay before the first retry; each next one doubles. Default 1 s. */
  retryBaseMs?: number;
  /** How long one attempt may take. Default 10 s. */
  attemptTimeoutMs?: number;
}

export interface DeliveryAttempt {
  attempt: number;
  /** The receiver's HTTP status, or undefined when it could not be reached or timed out. */
  status?: number;
  error?: string;
  ok: boolean;
}

/**
 * `SVC-SIGNATURE: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`, Stripe's scheme: the time
 * inside the signed text makes a captured delivery useless for replay after a while.
 */
export function signPayload(secret: string, body: string, timestamp: number): string {
  const digest = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return `t=${timestamp},v1=${digest}`;
}

/** Checks a signature header against a body; for receivers (and tests). */
export function verifySignature(secret: string, body: string, header: string, toleranceSeconds = 300, now = Date.now()): boolean {
  const parts = Object.fromEntries(header.split(',').map((part) => part.split('=') as [string, string]));
  const timestamp = Number(parts.t);
  if (!Number.isInteger(timestamp) || Math.abs(now / 1000 - timestamp) > toleranceSeconds || !parts.v1) return false;
  const expected = Buffer.from(signPayload(secret, body, timestamp).split('v1=')[1]!, 'hex');
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Webhook delivery for asynchronous reactor results: signed with the tenant's secret (kept sealed
 * in the store, the same across restarts), retried with exponential backoff on a non-2xx answer or
 * a network failure, every attempt reported.
 */
export class WebhookService {
  /** Pending backoff sleeps: disposing ends them at once, so deliveries return rather than hang. */
  private readonly sleeping = new Map<NodeJS.Timeout, () => void>();
  private disposed = false;
  private readonly attempts: number;
  private readonly retryBaseMs: number;
  private readonly attemptTimeoutMs: number;

  constructor(
    private readonly store: Store,
    private readonly cipher: Cipher,
    options: WebhookOptions = {},
  ) {
    this.attempts = options.attempts ?? 6;
    this.retryBaseMs = options.retryBaseMs ?? 1000;
    this.attemptTimeoutMs = options.attemptTimeoutMs ?? 10_000;
  }

  /** The tenant's signing secret, made (and stored sealed) on first use. */
  async secret(tenantId: string): Promise<string> {
    const tenant = this.store.tenants.get(tenantId, tenantId);
    if (!tenant) throw new Error(`no tenant ${tenantId}`);
    if (tenant.webhook_secret) return this.open(tenant);
    // Made when the write is saved: two first uses at once agree on one secret.
    return this.store.write((batch) => {
      const current = batch.get(this.store.tenants, tenantId, tenantId) ?? tenant;
      if (current.webhook_secret) return this.open(current);
      const secret = `whsec_${randomBase58(32)}`;
      batch.put(this.store.tenants, { ...current, webhook_secret: this.cipher.seal(secret, secretContext(tenantId)) });
      return secret;
    });
  }

  /**
   * Forgets every tenant's signing secret, to be made anew: for a store whose master key was lost
   * (the secrets sealed under it cannot be opened). Returns the tenants concerned.
   */
  async forgetSecrets(): Promise<string[]> {
    const sealed = [...this.store.tenants.everything()].filter((tenant) => tenant.webhook_secret);
    if (sealed.length === 0) return [];
    await this.store.write((batch) => {
      for (const tenant of sealed) {
        const { webhook_secret: _lost, ...rest } = batch.get(this.store.tenants, tenant.id, tenant.id) ?? tenant;
        batch.put(this.store.tenants, rest);
      }
    });
    return sealed.map((tenant) => tenant.id);
  }

  private open(tenant: TenantRow): string {
    try {
      return this.cipher.open<string>(tenant.webhook_secret!, secretContext(tenant.id));
    } catch {
      throw new EmulatorError('The master key (master.key or SVC_MASTER_KEY) is not the one this store was written with; give the right key.');
    }
  }

  /**
   * Delivers `payload` to `url`, retrying until a 2xx or the attempts run out; `report` hears
   * every attempt. Resolves when delivery has ended either way (never rejects).
   */
  async deliver(tenantId: string, url: string, payload: unknown, report: (attempt: DeliveryAttempt) => void): Promise<boolean> {
    const body = JSON.stringify(payload);
    const secret = await this.secret(tenantId);
    for (let attempt = 1; attempt <= this.attempts && !this.disposed; attempt++) {
      const result = await this.attempt(url, body, secret, attempt);
      report(result);
      if (result.ok) return true;
      if (attempt < this.attempts) await this.sleep(this.retryBaseMs * 2 ** (attempt - 1));
    }
    return false;
  }

  dispose(): void {
    this.disposed = true;
    for (const [timer, wake] of this.sleeping) {
      clearTimeout(timer);
      wake();
    }
    this.sleeping.clear();
  }

  private async attempt(url: string, body: string, secret: string, attempt: number): Promise<DeliveryAttempt> {
    try {
      // Node's fetch (its bundled undici): a delivery or two needs no pool of its own.
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [SIGNATURE_HEADER]: signPayload(secret, body, Math.floor(Date.now() / 1000)),
          'user-agent': 'svc-emulator-webhooks',
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.attemptTimeoutMs),
      });
      await response.arrayBuffer();
      return { attempt, status: response.status, ok: response.status >= 200 && response.status < 300 };
    } catch (error) {
      const { name, cause } = error as Error & { cause?: NodeJS.ErrnoException };
      const reason = name === 'TimeoutError' || name === 'AbortError'
        ? `no answer within ${this.attemptTimeoutMs} ms`
        : (cause?.code ?? cause?.message ?? (error as Error).message);
      return { attempt, error: reason, ok: false };
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.sleeping.delete(timer);
        resolve();
      }, ms);
      timer.unref();
      this.sleeping.set(timer, resolve);
    });
  }
}

function secretContext(tenantId: string): string {
  return `webhook-secret:${tenantId}`;
}
