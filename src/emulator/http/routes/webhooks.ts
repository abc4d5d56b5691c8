import { pageSchema, webhookDeliverySchema } from '../../../api/answer-schemas.js';
import { MAX_PAGE, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE } from '../../../api/limits.js';
import type { DeliveryQuery } from '../../services/webhook-deliveries.js';
import type { Exchange } from '../exchange.js';
import { type Route, json, managementCallerOf } from '../route.js';

const deliveriesQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    reactor: { type: 'string', maxLength: 200 },
    status: { enum: ['pending', 'delivered', 'failed'] },
    page: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 1 },
    size: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
  },
} as const;

const deliveryParamsSchema = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', format: 'uuid' } },
} as const;

/** The management key's tenant, or a 403: deliveries carry where a tenant's results go. */
function managementTenant(call: Exchange): string {
  return managementCallerOf(call, 'Webhook deliveries are shown to management Applications only.').tenantId;
}

/**
 * The webhook deliveries of the tenant's asynchronous invocations (`svc webhooks list`), newest
 * first, and one more attempt of one (`svc webhooks resend`): loopback, management keys.
 */
export const webhookRoutes: readonly Route[] = [
  {
    method: 'GET',
    path: '/_emulator/webhooks',
    summary:
      "The tenant's webhook deliveries, newest first, with their attempts; filters: reactor (name or id), status (management keys, loopback only).",
    schema: { querystring: deliveriesQuerySchema },
    admin: true,
    responses: { 200: { description: 'A page of deliveries.', schema: pageSchema(webhookDeliverySchema) } },
    handler: (call, { services }) =>
      json(services.deliveries.list(managementTenant(call), call.query as DeliveryQuery)),
  },
  {
    method: 'POST',
    path: '/_emulator/webhooks/:id/resend',
    summary: 'One more attempt now of an ended delivery, recorded with its attempts (management keys, loopback only).',
    schema: { params: deliveryParamsSchema },
    admin: true,
    responses: { 200: { description: 'The delivery after the attempt.', schema: webhookDeliverySchema } },
    problems: [404, 409],
    handler: async (call, { services }) =>
      json(await services.deliveries.resend(managementTenant(call), call.params.id ?? '')),
  },
];
