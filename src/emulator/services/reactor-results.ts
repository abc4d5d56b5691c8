import { randomUUID } from 'node:crypto';
import type { ReactorEvent, ReactorResult, WebhookAttempt } from '../../api/types.js';
import type { Problem } from '../../api/problem.js';
import { problemOf } from '../errors.js';
import type { EmitEvent } from '../events.js';
import { isQuotaFull } from '../quotas.js';
import { PendingWork } from './pending-work.js';
import type { WriteBatch } from '../store/batch.js';
import type { Store } from '../store/store.js';
import type { DeliveryRecord, ReactorResultRecord } from '../store/records.js';
import type { TenantClocks } from './tenant-clocks.js';
import type { Cipher, Sealed } from '../crypto/cipher.js';
import type { DeliveryAttempt, Verdict, WebhookService } from './webhooks.js';

/** How long a result stays after its run and its delivery have both ended. */
export const DEFAULT_RESULT_RETENTION_MS = 24 * 3_600_000;
/** Results kept per tenant at most; the oldest ended ones go first. */
export const DEFAULT_MAX_RESULTS_PER_TENANT = 10_000;

export interface ResultOptions {
  /** Default 24 h after the run and the delivery have ended. */
  retentionMs?: number;
  /** Default 10,000. A result still running or being delivered is never dropped. */
  maxPerTenant?: number;
}

/** What a run came to, sealed in the record. */
export interface Outcome {
  raw?: unknown;
  tokens?: unknown;
  error?: Problem;
}

const INTERRUPTED: Outcome = {
  error: {
    type: 'urn:svc:problem:internal',
    title: 'Interrupted',
    status: 500,
    detail: 'The emulator stopped before this invocation finished.',
  },
};

const OUTCOME_LOST: Outcome = {
  error: {
    type: 'urn:svc:problem:internal',
    title: 'Outcome lost',
    status: 500,
    detail: 'This result was sealed with a master key that is gone.',
  },
};

interface Deps {
  store: Store;
  cipher: Cipher;
  webhooks: WebhookService;
  emit: EmitEvent;
  clocks: TenantClocks;
}

/**
 * The results of asynchronous reactor invocations and the delivery of their webhooks. Every step
 * is stored before it is reported (the run's end, each attempt), so a stop or a crash loses none:
 * at the next start a run cut off ends failed and every pending delivery resumes. Results are
 * dropped a retention after they have ended, and past a cap per tenant.
 */
export class ReactorResults {
  private readonly tasks = new Set<Promise<void>>();
  /** The same runs and deliveries by tenant: what `svc/testing`'s settle waits for. */
  readonly pending = new PendingWork();
  readonly retentionMs: number;
  private readonly maxPerTenant: number;

  constructor(
    private readonly deps: Deps,
    options: ResultOptions = {},
  ) {
    this.retentionMs = options.retentionMs ?? DEFAULT_RESULT_RETENTION_MS;
    this.maxPerTenant = options.maxPerTenant ?? DEFAULT_MAX_RESULTS_PER_TENANT;
  }

  /** Stores a new invocation, pending (its delivery too), making room under the tenant's cap in the same write. */
  async open(tenantId: string, reactorId: string, callbackUrl: string): Promise<ReactorResultRecord> {
    const now = this.deps.clocks.now(tenantId).toISOString();
    const record: ReactorResultRecord = {
      id: randomUUID(),
      tenant_id: tenantId,
      reactor_id: reactorId,
      status: 'pending',
      started_at: now,
      created_at: now,
      callback_url: callbackUrl,
      delivery: { status: 'pending', attempts: 0, last_status: null, event_id: randomUUID() },
    };
    await this.deps.store.write((batch) => {
      batch.put(this.deps.store.results, record);
      this.makeRoom(batch, tenantId);
    });
    return record;
  }

  /** Stores how a run ended, then delivers it; nothing of a result that is gone (its tenant deleted). */
  async finish(record: ReactorResultRecord, status: 'completed' | 'failed', outcome: Outcome): Promise<void> {
    let done: ReactorResultRecord | undefined;
    try {
      done = await this.end(record, status, outcome);
    } catch (error) {
      if (!isQuotaFull(error)) throw error;
      // An outcome past the tenant's quota is not kept: the run ends failed, its webhook saying why.
      done = await this.end(record, 'failed', { error: problemOf(error) }, true);
    }
    if (done) await this.deliver(done);
  }

  /** Stores how a run ended; a failure's small outcome (`bookkeeping`) whatever the quota says. */
  private end(
    record: ReactorResultRecord,
    status: 'completed' | 'failed',
    outcome: Outcome,
    bookkeeping = false,
  ): Promise<ReactorResultRecord | undefined> {
    return this.deps.store.write((batch) => {
      if (bookkeeping) batch.bookkeeping();
      const latest = batch.get(this.deps.store.results, record.tenant_id, record.id);
      if (!latest) return undefined;
      const ended: ReactorResultRecord = {
        ...latest,
        status,
        outcome: this.seal(latest, outcome),
        completed_at: this.deps.clocks.now(latest.tenant_id).toISOString(),
      };
      batch.put(this.deps.store.results, ended);
      return ended;
    });
  }

  /** A result for polling; undefined when there is none of that reactor, or it is past its retention. */
  find(tenantId: string, reactorId: string, requestId: string): ReactorResult | undefined {
    const record = this.deps.store.results.get(tenantId, requestId);
    if (!record || record.reactor_id !== reactorId || this.expired(record, this.deps.clocks.ms(tenantId)))
      return undefined;
    return { ...this.event(record), delivery: wireDelivery(record.delivery) };
  }

  /**
   * At start: a run still pending was cut off by the stop and ends failed (its delivery pending);
   * every pending delivery resumes, at the time its backoff said.
   */
  async recover(): Promise<void> {
    const { results } = this.deps.store;
    // One write, all or nothing: a failure leaves every record to be recovered at the next start.
    const changed = [...results.everything()].filter(
      (record) => record.status === 'pending' || record.delivery === undefined,
    );
    if (changed.length > 0) {
      await this.deps.store.write((batch) => {
        batch.bookkeeping();
        for (const saved of changed) {
          const stored = batch.get(results, saved.tenant_id, saved.id);
          if (!stored) continue;
          let record = withDelivery(stored);
          if (record.status === 'pending')
            record = {
              ...record,
              status: 'failed',
              completed_at: this.deps.clocks.now(record.tenant_id).toISOString(),
              outcome: this.seal(record, INTERRUPTED),
            };
          if (record !== stored) batch.put(results, record);
        }
      });
    }
    const pending = [...this.deps.store.results.everything()].filter((record) => record.delivery.status === 'pending');
    for (const record of pending) this.track(this.deliver(record), record.tenant_id);
  }

  /** Drops the results past their retention; returns how many. */
  async sweep(): Promise<number> {
    const { results } = this.deps.store;
    const now = this.deps.clocks.snapshot();
    const expired = [...results.everything()].filter((record) => this.expired(record, now(record.tenant_id)));
    if (expired.length === 0) return 0;
    return this.deps.store.write((batch) => {
      let removed = 0;
      for (const record of expired) {
        const latest = batch.get(results, record.tenant_id, record.id);
        if (latest && this.expired(latest, now(latest.tenant_id)) && batch.delete(results, record.tenant_id, record.id))
          removed++;
      }
      return removed;
    });
  }

  /**
   * In `batch`, for a store whose master key was lost (outcomes sealed under it cannot be opened):
   * replaces every stored outcome by an error saying it was lost. Returns how many there were.
   */
  forgetOutcomes(batch: WriteBatch): number {
    let lost = 0;
    for (const saved of this.deps.store.results.everything()) {
      const record = batch.get(this.deps.store.results, saved.tenant_id, saved.id);
      if (record?.outcome === undefined) continue;
      batch.put(this.deps.store.results, { ...record, outcome: this.seal(record, OUTCOME_LOST) });
      lost++;
    }
    return lost;
  }

  /** Runs a run-and-deliver in the background; `settle` waits for it (and `pending` by tenant). */
  track(task: Promise<void>, tenantId: string): void {
    const tracked = task.catch((error: unknown) => {
      this.deps.emit({
        type: 'error',
        message: `asynchronous invocation failed: ${(error as Error).message}`,
        stack: (error as Error).stack,
      });
    });
    this.tasks.add(this.pending.track(tenantId, tracked));
    void tracked.finally(() => this.tasks.delete(tracked));
  }

  /** Waits for the runs and deliveries under way (a stopping emulator ends deliveries at once). */
  async settle(): Promise<void> {
    while (this.tasks.size > 0) await Promise.allSettled([...this.tasks]);
  }

  private async deliver(record: ReactorResultRecord): Promise<void> {
    const where = shownUrl(record.callback_url);
    const { delivery } = record;
    const event = {
      tenantId: record.tenant_id,
      url: record.callback_url,
      id: delivery.event_id,
      body: JSON.stringify(this.event(record)),
    };
    const progress = {
      attempts: delivery.attempts,
      ...(delivery.next_attempt_at !== undefined && { notBefore: Date.parse(delivery.next_attempt_at) }),
    };
    await this.deps.webhooks.deliver(event, progress, async (attempt, verdict) => {
      const next = await this.deps.store.write((batch) => {
        // An attempt is kept whatever the tenant's quota says (at most KEPT_ATTEMPTS a result).
        batch.bookkeeping();
        // Gone (its tenant deleted): not written back, and the delivery stops.
        const latest = batch.get(this.deps.store.results, record.tenant_id, record.id);
        if (!latest) return undefined;
        const after = afterAttempt(
          latest.delivery,
          attempt,
          verdict,
          this.deps.clocks.now(latest.tenant_id).toISOString(),
        );
        batch.put(this.deps.store.results, { ...latest, delivery: after });
        return after;
      });
      if (!next) return false;
      // Reported once stored: an attempt in the log is one a restart knows of.
      this.deps.emit({
        type: 'webhook',
        tenantId: record.tenant_id,
        reactorId: record.reactor_id,
        requestId: record.id,
        url: where,
        ...attempt,
        delivery: next.status,
      });
      return true;
    });
  }

  /**
   * In the write of a new result: drops the tenant's oldest ended results while it holds more than
   * its cap. Counted from what is saved plus the new one, less what writes saved along with it drop;
   * what they add is counted by the next write, so no more are dropped than the cap asks.
   */
  private makeRoom(batch: WriteBatch, tenantId: string): void {
    const { results } = this.deps.store;
    let excess = results.count(tenantId) + 1 - this.maxPerTenant;
    for (const saved of results.values(tenantId)) {
      if (excess <= 0) break;
      const record = batch.get(results, tenantId, saved.id);
      // Dropped by a write saved along with this one: one fewer to drop.
      if (!record) excess--;
      else if (ended(record) && batch.delete(results, tenantId, record.id)) excess--;
    }
  }

  private expired(record: ReactorResultRecord, now: number): boolean {
    if (!ended(record)) return false;
    const endedAt = Date.parse(record.delivery.ended_at ?? record.completed_at ?? record.created_at);
    return endedAt + this.retentionMs <= now;
  }

  /** The webhook's body: built from the stored record alone, so every attempt sends the same bytes. */
  event(record: ReactorResultRecord): ReactorEvent {
    const { id, reactor_id, status, started_at, completed_at } = record;
    const { raw, tokens, error } = record.outcome
      ? this.deps.cipher.open<Outcome>(record.outcome, outcomeContext(record))
      : ({} as Outcome);
    return {
      id,
      reactor_id,
      status,
      ...(raw !== undefined && { raw }),
      ...(tokens !== undefined && { tokens }),
      ...(error !== undefined && { error }),
      started_at,
      ...(completed_at !== undefined && { completed_at }),
    };
  }

  /** A result's outcome is sealed like token data: it may hold what the reactor detokenized. */
  private seal(record: ReactorResultRecord, outcome: Outcome): Sealed {
    return this.deps.cipher.seal(outcome, outcomeContext(record));
  }
}

function outcomeContext(record: ReactorResultRecord): string {
  return `result:${record.tenant_id}:${record.id}`;
}

function ended(record: ReactorResultRecord): boolean {
  return record.status !== 'pending' && record.delivery.status !== 'pending';
}

/** The attempts a delivery record keeps, the latest last. */
export const KEPT_ATTEMPTS = 20;

/** A delivery after `attempt` (a retry's, or with `resend` one `svc webhooks resend` asked for). */
export function afterAttempt(
  delivery: DeliveryRecord,
  attempt: DeliveryAttempt,
  verdict: Verdict,
  now: string,
  resend = false,
): DeliveryRecord {
  const made: WebhookAttempt = {
    attempt: attempt.attempt,
    at: now,
    status: attempt.status ?? null,
    ...(attempt.error !== undefined && { error: attempt.error }),
    ...(resend && { resend: true as const }),
  };
  return {
    status: verdict.next === 'retry' ? 'pending' : verdict.next,
    attempts: attempt.attempt,
    last_status: attempt.status ?? null,
    ...(attempt.error !== undefined && { last_error: attempt.error }),
    event_id: delivery.event_id,
    ...(verdict.next === 'retry' ? { next_attempt_at: verdict.retryAt.toISOString() } : { ended_at: now }),
    history: [...(delivery.history ?? []), made].slice(-KEPT_ATTEMPTS),
  };
}

function wireDelivery(delivery: DeliveryRecord): ReactorResult['delivery'] {
  const { status, attempts, last_status, last_error, event_id } = delivery;
  return { status, attempts, last_status, ...(last_error !== undefined && { last_error }), event_id };
}

/**
 * Records stored before deliveries were recorded kept a list of attempts instead: delivered if one
 * succeeded, failed if all did not, pending (so delivered now) if none was made.
 */
function withDelivery(record: ReactorResultRecord): ReactorResultRecord {
  if (record.delivery !== undefined) return record;
  type Legacy = ReactorResultRecord & { deliveries?: { status?: number; error?: string; ok: boolean; at: string }[] };
  const { deliveries = [], ...rest } = record as Legacy;
  const last = deliveries.at(-1);
  const status = deliveries.some((attempt) => attempt.ok) ? 'delivered' : last ? 'failed' : 'pending';
  return {
    ...rest,
    delivery: {
      status,
      attempts: deliveries.length,
      last_status: last?.status ?? null,
      ...(last?.error !== undefined && { last_error: last.error }),
      event_id: randomUUID(),
      ...(last && { ended_at: last.at }),
    },
  };
}

/**
 * Where a result went, as the log shows it: not the credentials, query string or fragment the URL
 * may carry (`https://user:pass@host/hook?token=...`).
 */
export function shownUrl(url: string): string {
  try {
    const { protocol, host, pathname } = new URL(url);
    return `${protocol}//${host}${pathname}`;
  } catch {
    // The schema took it as a URI; whatever it is, only what comes before any query string is shown.
    return url.split(/[?#]/)[0]!.replace(/\/\/[^/@]*@/, '//');
  }
}
