import type { WebhookDeliveryEntry } from '../../api/types.js';
import type { EmitEvent } from '../events.js';
import { HttpError, notFound } from '../errors.js';
import type { ReactorResultRecord } from '../store/records.js';
import type { Store } from '../store/store.js';
import { paginate } from './pagination.js';
import { type ReactorResults, afterAttempt, shownUrl } from './reactor-results.js';
import type { TenantClocks } from './tenant-clocks.js';
import type { WebhookService } from './webhooks.js';

export interface DeliveryQuery {
  reactor?: string;
  status?: string;
  page?: number;
  size?: number;
}

/**
 * The webhook deliveries of a tenant's asynchronous invocations, as Stripe's CLI lists events:
 * newest first, filtered by reactor (name or id) and status; and one more attempt of one on demand.
 */
export class WebhookDeliveries {
  constructor(
    private readonly deps: {
      store: Store;
      results: ReactorResults;
      webhooks: WebhookService;
      clocks: TenantClocks;
      emit: EmitEvent;
    },
  ) {}

  list(tenantId: string, query: DeliveryQuery) {
    const { store } = this.deps;
    let records = store.results.list(tenantId);
    if (query.reactor !== undefined) {
      const wanted = query.reactor.toLowerCase();
      const named = store.reactors.list(tenantId).find((reactor) => reactor.name.toLowerCase() === wanted);
      records = records.filter((record) => record.reactor_id === (named?.id ?? wanted));
    }
    if (query.status !== undefined) records = records.filter((record) => record.delivery.status === query.status);
    const sorted = [...records].sort((a, b) => b.created_at.localeCompare(a.created_at) || a.id.localeCompare(b.id));
    const page = paginate(sorted, query);
    return { ...page, data: page.data.map((record) => this.view(record)) };
  }

  /**
   * One attempt now of an ended delivery, recorded as an attempt (delivered on a 2xx; failed
   * otherwise). A delivery still pending has its retries under way: 409, with when the next is due.
   */
  async resend(tenantId: string, id: string): Promise<WebhookDeliveryEntry> {
    const { store, results, webhooks, clocks, emit } = this.deps;
    const record = store.results.get(tenantId, id.toLowerCase());
    if (!record) throw notFound('webhook delivery', id);
    if (record.status === 'pending' || record.delivery.status === 'pending') {
      const next = record.delivery.next_attempt_at;
      throw new HttpError(
        409,
        `Delivery ${record.id} is still pending${next ? ` (next attempt at ${next})` : ''}; resend it once it has ended.`,
      );
    }
    const event = {
      tenantId,
      url: record.callback_url,
      id: record.delivery.event_id,
      body: JSON.stringify(results.event(record)),
    };
    const attempt = await webhooks.once(event, record.delivery.attempts + 1);
    const saved = await store.write((batch) => {
      batch.bookkeeping();
      const latest = batch.get(store.results, tenantId, record.id);
      if (!latest) throw notFound('webhook delivery', id);
      const verdict = attempt.ok ? ({ next: 'delivered' } as const) : ({ next: 'failed' } as const);
      const now = clocks.now(tenantId).toISOString();
      const next = { ...latest, delivery: afterAttempt(latest.delivery, attempt, verdict, now, true) };
      batch.put(store.results, next);
      return next;
    });
    emit({
      type: 'webhook',
      tenantId,
      reactorId: saved.reactor_id,
      requestId: saved.id,
      url: shownUrl(saved.callback_url),
      ...attempt,
      delivery: saved.delivery.status,
    });
    return this.view(saved);
  }

  private view(record: ReactorResultRecord): WebhookDeliveryEntry {
    const { delivery } = record;
    const reactor = this.deps.store.reactors.get(record.tenant_id, record.reactor_id);
    return {
      id: record.id,
      reactor_id: record.reactor_id,
      reactor: reactor?.name ?? null,
      callback_url: shownUrl(record.callback_url),
      event_id: delivery.event_id,
      status: delivery.status,
      attempts: delivery.attempts,
      last_status: delivery.last_status,
      ...(delivery.last_error !== undefined && { last_error: delivery.last_error }),
      ...(delivery.next_attempt_at !== undefined &&
        delivery.status === 'pending' && { next_attempt_at: delivery.next_attempt_at }),
      created_at: record.created_at,
      attempt_log: delivery.history ?? [],
    };
  }
}
