import type { Readable } from 'node:stream';
import type { Agent } from 'undici';
import { JSON_CONTENT_TYPE, SIGNATURE_HEADER, WEBHOOK_ID_HEADER } from '../../api/headers.js';
import { signPayload } from '../../api/webhook-signature.js';
import { EmulatorError } from '../errors.js';
import type { WriteBatch } from '../store/batch.js';
import type { Store } from '../store/store.js';
import type { StoredTenant } from '../store/records.js';
import type { Cipher } from '../crypto/cipher.js';
import { randomBase58 } from './keys.js';
import { TenantClocks } from './tenant-clocks.js';
import { DeliverySlots } from './webhook-slots.js';

/**
 * How much of a receiver's answer is read: its status decides, the rest is dropped with the
 * connection (a receiver answering 1 GiB once took the emulator to 4.6 GB).
 */
export const MAX_ANSWER_BYTES = 64 * 1024;
/** However many attempts are configured, no wait between two is longer. */
const MAX_BACKOFF_MS = 3_600_000;

export interface WebhookOptions {
  /** Attempts in all, the first included. Default 6. */
  attempts?: number;
  /** Delay before the first retry; each next one doubles. Default 1 s. */
  retryBaseMs?: number;
  /** How long one attempt may take, the answer included. Default 10 s. */
  attemptTimeoutMs?: number;
  /** Attempts under way at once, all tenants (each holds a socket); more wait their turn. Default 64. */
  maxConcurrent?: number;
  /** Attempts under way at once for one tenant. Default 16. */
  maxConcurrentPerTenant?: number;
}

export interface DeliveryAttempt {
  attempt: number;
  /** The receiver's HTTP status, or undefined when it could not be reached or timed out. */
  status?: number;
  error?: string;
  ok: boolean;
}

/** One event: the same id and the same body (bytes) on every attempt, before a restart and after. */
export interface WebhookEvent {
  tenantId: string;
  url: string;
  id: string;
  body: string;
}

/** Where a delivery stood before this run of it (a restart resumes one): attempts made, when to try next. */
export interface DeliveryProgress {
  attempts: number;
  /** Epoch milliseconds; no attempt before. */
  notBefore?: number;
}

/** What an attempt leads to. */
export type Verdict = { next: 'retry'; retryAt: Date } | { next: 'delivered' } | { next: 'failed' };

/** How a run of a delivery ended; `stopped`: the emulator is stopping, the delivery is still pending. */
export type DeliveryEnd = 'delivered' | 'failed' | 'stopped';

export { signPayload, verifySignature } from '../../api/webhook-signature.js';

/**
 * Webhook delivery for asynchronous reactor results: signed with the tenant's secret (kept sealed
 * in the store, the same across restarts), retried with exponential backoff on a non-2xx answer or
 * a network failure up to a bound, stopped by a 410, never following a redirect. The caller records
 * every attempt before the next one starts, so that a restart picks the delivery up where it was.
 * The backoff runs on the tenant's clock (a retry is due when its clock says so, moved or not); the
 * signature's time is the emulator's, as the receiver's clock is.
 */
export class WebhookService {
  /** The attempts in flight, by their tenant: aborted when the emulator stops, or their tenant is deleted. */
  private readonly inFlight = new Map<AbortController, string>();
  private disposed = false;
  /** undici is loaded with the first delivery: an emulator that delivers nothing never pays for it. */
  private client: Promise<{ request: typeof import('undici').request; agent: Agent }> | undefined;
  private readonly attempts: number;
  private readonly retryBaseMs: number;
  private readonly attemptTimeoutMs: number;
  /** Attempts under way, each with its socket: bounded overall and per tenant. */
  private readonly slots: DeliverySlots;

  constructor(
    private readonly store: Store,
    private readonly cipher: Cipher,
    options: WebhookOptions = {},
    /** Each tenant's clock: backoff waits on it (closed by the services' dispose: the waits end at once). */
    private readonly clocks: TenantClocks = new TenantClocks(),
  ) {
    this.attempts = options.attempts ?? 6;
    this.retryBaseMs = options.retryBaseMs ?? 1000;
    this.attemptTimeoutMs = options.attemptTimeoutMs ?? 10_000;
    this.slots = new DeliverySlots(options.maxConcurrent ?? 64, options.maxConcurrentPerTenant ?? 16);
  }

  /** The tenant's signing secret, made (and stored sealed) on first use. */
  async secret(tenantId: string): Promise<string> {
    const tenant = this.store.tenants.get(tenantId, tenantId);
    if (!tenant) throw new Error(`no tenant ${tenantId}`);
    if (tenant.webhook_secret) return this.open(tenant);
    // Made when the write is saved: two first uses at once agree on one secret.
    return this.store.write((batch) => {
      // Deleted meanwhile: its row is not written back.
      const current = batch.get(this.store.tenants, tenantId, tenantId);
      if (!current) throw new Error(`no tenant ${tenantId}`);
      if (current.webhook_secret) return this.open(current);
      const secret = `whsec_${randomBase58(32)}`;
      batch.put(this.store.tenants, { ...current, webhook_secret: this.cipher.seal(secret, secretContext(tenantId)) });
      return secret;
    });
  }

  /**
   * In `batch`, for a store whose master key was lost (the secrets sealed under it cannot be
   * opened): forgets every tenant's signing secret, to be made anew. Returns the tenants concerned.
   */
  forgetSecrets(batch: WriteBatch): string[] {
    const tenants: string[] = [];
    for (const saved of this.store.tenants.everything()) {
      const current = batch.get(this.store.tenants, saved.tenant_id, saved.id);
      if (!current?.webhook_secret) continue;
      const { webhook_secret: _lost, ...rest } = current;
      batch.put(this.store.tenants, rest);
      tenants.push(current.id);
    }
    return tenants;
  }

  private open(tenant: StoredTenant): string {
    try {
      return this.cipher.open<string>(tenant.webhook_secret!, secretContext(tenant.id));
    } catch {
      throw new EmulatorError(
        'The master key (master.key or SVC_MASTER_KEY) is not the one this store was written with; give the right key.',
      );
    }
  }

  /**
   * Delivers `event`, going on from `progress`, until a 2xx, a 410, the last attempt, the emulator
   * stopping or the tenant being deleted. `record` hears every attempt and what it leads to, and is
   * awaited before the next: what it stores is what a restart resumes from; it answers false when
   * the result is gone (its tenant deleted), and the delivery stops.
   */
  async deliver(
    event: WebhookEvent,
    progress: DeliveryProgress,
    record: (attempt: DeliveryAttempt, verdict: Verdict) => Promise<boolean>,
  ): Promise<DeliveryEnd> {
    const { tenantId } = event;
    if (!this.going(tenantId)) return 'stopped';
    const secret = await this.secret(tenantId);
    if (progress.notBefore !== undefined) await this.clocks.until(tenantId, progress.notBefore);
    // A delivery resumed with its attempts used up (fewer configured since) gets one more, its last.
    for (let n = progress.attempts + 1; this.going(tenantId); n++) {
      const attempt = await this.attempt(event, secret, n);
      // An attempt cut off by the stop is no attempt: it is made again after the restart. One cut
      // off by its tenant's deletion is none either: nothing is left to record it in.
      if ((this.disposed && !attempt.ok) || this.deleted(tenantId)) break;
      const verdict = this.verdict(attempt, this.clocks.ms(tenantId));
      if (!(await record(attempt, verdict))) break;
      if (verdict.next !== 'retry') return verdict.next;
      if (this.going(tenantId)) await this.clocks.until(tenantId, verdict.retryAt.getTime());
    }
    return 'stopped';
  }

  /** One attempt now, outside any retry schedule (`svc webhooks resend`); recording it is the caller's. */
  async once(event: WebhookEvent, attempt: number): Promise<DeliveryAttempt> {
    if (!this.going(event.tenantId)) return { attempt, error: 'the emulator is stopping', ok: false };
    return this.attempt(event, await this.secret(event.tenantId), attempt);
  }

  /**
   * Ends the deliveries of a tenant just deleted: its attempts in flight are aborted and those
   * waiting for a slot get none (its waits for a time are woken by its clock's forget).
   */
  stopTenant(tenantId: string): void {
    this.slots.drop(tenantId);
    for (const [attempt, owner] of this.inFlight) if (owner === tenantId) attempt.abort();
  }

  /** True while a delivery of the tenant may go on: the emulator runs, and the tenant exists. */
  private going(tenantId: string): boolean {
    return !this.disposed && !this.deleted(tenantId);
  }

  private deleted(tenantId: string): boolean {
    return this.store.tenants.get(tenantId, tenantId) === undefined;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.slots.close();
    for (const attempt of this.inFlight.keys()) attempt.abort();
    const client = await this.client?.catch(() => undefined);
    await client?.agent.destroy().catch(() => {});
  }

  /** What follows `attempt`, made at `now` on the tenant's clock. */
  private verdict(attempt: DeliveryAttempt, now: number): Verdict {
    if (attempt.ok) return { next: 'delivered' };
    // 410: the receiver says the address is gone for good (Stripe and GitHub read it so too).
    if (attempt.status === 410 || attempt.attempt >= this.attempts) return { next: 'failed' };
    const delay = Math.min(this.retryBaseMs * 2 ** (attempt.attempt - 1), MAX_BACKOFF_MS);
    return { next: 'retry', retryAt: new Date(now + delay) };
  }

  private async attempt(event: WebhookEvent, secret: string, attempt: number): Promise<DeliveryAttempt> {
    const { request, agent } = await (this.client ??= this.connect());
    // The attempt's time runs once it has its turn; a stop meanwhile is no attempt.
    const release = await this.slots.take(event.tenantId);
    if (!release) return { attempt, error: 'the emulator stopped, or the tenant was deleted', ok: false };
    try {
      return await this.send(request, agent, event, secret, attempt);
    } finally {
      release();
    }
  }

  /** One POST of the event, under the attempt's timeout; its socket is closed with its answer. */
  private async send(
    request: typeof import('undici').request,
    agent: Agent,
    event: WebhookEvent,
    secret: string,
    attempt: number,
  ): Promise<DeliveryAttempt> {
    // A timer of our own, not AbortSignal.timeout: Node 20 may collect that signal (held weakly,
    // here only through undici) before it fires, and the attempt then waits for ever (seen under GC).
    const abort = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, this.attemptTimeoutMs);
    this.inFlight.set(abort, event.tenantId);
    try {
      const response = await request(event.url, {
        dispatcher: agent,
        method: 'POST',
        headers: {
          'content-type': JSON_CONTENT_TYPE,
          [SIGNATURE_HEADER]: signPayload(secret, event.body, Math.floor(Date.now() / 1000)),
          [WEBHOOK_ID_HEADER]: event.id,
          'user-agent': 'svc-emulator-webhooks',
        },
        body: event.body,
        // No socket outlives its attempt (Connection: close), so the sockets are as many as the slots.
        reset: true,
        // The whole exchange, the answer's body too: a receiver that trickles cannot hold an attempt open.
        signal: abort.signal,
      });
      // The status is the answer; the body is read only so far, then dropped with the connection.
      await readAtMost(response.body, MAX_ANSWER_BYTES);
      const status = response.statusCode;
      // A redirect is not followed (undici's request never does): a 3xx is a failed attempt.
      return { attempt, status, ok: status >= 200 && status < 300 };
    } catch (error) {
      const { code, message } = error as Error & { code?: string };
      return {
        attempt,
        error: timedOut ? `no answer within ${this.attemptTimeoutMs} ms` : (code ?? message),
        ok: false,
      };
    } finally {
      clearTimeout(timer);
      this.inFlight.delete(abort);
    }
  }

  private async connect(): Promise<{ request: typeof import('undici').request; agent: Agent }> {
    const { Agent, request } = await import('undici');
    return { request, agent: new Agent({ connect: { timeout: this.attemptTimeoutMs } }) };
  }
}

/** Reads a body up to `limit` bytes and drops the rest (destroying it closes its connection). */
async function readAtMost(body: Readable, limit: number): Promise<void> {
  let read = 0;
  try {
    for await (const chunk of body) {
      read += (chunk as Buffer).length;
      if (read > limit) break;
    }
  } catch {
    // An answer cut off (the attempt's timeout, the receiver closing) still had its status.
  } finally {
    body.destroy();
  }
}

function secretContext(tenantId: string): string {
  return `webhook-secret:${tenantId}`;
}
