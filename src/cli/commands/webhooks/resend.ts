import { UUID_PATTERN } from '../../../api/patterns.js';
import { ApiError } from '../../../client/index.js';
import { UserError } from '../../io/errors.js';
import { defineCommand } from '../../registry.js';
import type { WebhookDeliveryEntry } from '../../../api/types.js';
import { lastOutcome } from './deliveries.js';

export const resend = defineCommand({
  name: 'resend',
  description:
    'one more attempt now of an ended webhook delivery (its id: the invocation id `svc webhooks list` shows)',
  args: [{ name: 'id', description: 'the delivery (asynchronous invocation) id' }],
  examples: ['svc webhooks resend 0b6f3c1e-...'],
  async handler({ args }, ctx) {
    const id = args.id;
    if (!UUID_PATTERN.test(id))
      throw new UserError(
        `No webhook delivery ${JSON.stringify(id)}: an id looks like a UUID (svc webhooks list shows them).`,
      );
    let delivery: WebhookDeliveryEntry;
    try {
      delivery = await (await ctx.client()).webhookDeliveries.resend(id);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404)
        throw new UserError(`No webhook delivery ${id} (svc webhooks list shows them; results are kept 24 h).`);
      throw error;
    }
    await ctx.output.result(delivery, () => {
      const outcome = lastOutcome(delivery);
      ctx.output.line(
        delivery.status === 'delivered'
          ? `Delivered ${delivery.id} (attempt ${delivery.attempts}: ${outcome}).`
          : `Attempt ${delivery.attempts} of ${delivery.id} failed: ${outcome}.`,
      );
    });
    return delivery.status === 'delivered' ? undefined : 1;
  },
});
