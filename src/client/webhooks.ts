import type { Page, WebhookDeliveryEntry } from '../api/types.js';
import type { Requester } from './requester.js';

export interface DeliveryListQuery {
  /** A reactor's name or id. */
  reactor?: string | undefined;
  /** `pending`, `delivered` or `failed`. */
  status?: string | undefined;
  page?: number | undefined;
  size?: number | undefined;
}

/**
 * The webhook deliveries of the tenant's asynchronous invocations (`/_emulator/webhooks`, management
 * keys, loopback only): `svc webhooks list` and `resend`.
 */
export class WebhookDeliveriesApi {
  constructor(private readonly client: Requester) {}

  /** `GET /_emulator/webhooks`: newest first, filtered by reactor and status. */
  list(query: DeliveryListQuery = {}): Promise<Page<WebhookDeliveryEntry>> {
    return this.client.request<Page<WebhookDeliveryEntry>>('GET', '/_emulator/webhooks', {
      query: { ...query },
      shape: 'page',
    });
  }

  /** `POST /_emulator/webhooks/{id}/resend`: one more attempt now of an ended delivery, as it stands after it. */
  resend(id: string): Promise<WebhookDeliveryEntry> {
    return this.client.request<WebhookDeliveryEntry>('POST', `/_emulator/webhooks/${encodeURIComponent(id)}/resend`, {
      shape: 'object',
    });
  }
}
