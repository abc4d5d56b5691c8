import { UsageError } from '../../io/errors.js';
import { defineCommand } from '../../registry.js';
import { codeId } from '../logs.js';
import { emptyPage, notePages, pageQuery, pagingOptions } from '../paging.js';
import { attemptLines, lastOutcome } from './deliveries.js';

const STATUSES = ['pending', 'delivered', 'failed'];

export const list = defineCommand({
  name: 'list',
  aliases: ['ls'],
  description: 'the webhook deliveries of asynchronous reactor invocations, newest first, with their attempts',
  options: [
    { flags: '--reactor <name>', description: 'only this reactor (name or id)' },
    { flags: '--status <status>', description: 'only deliveries pending, delivered or failed' },
    ...pagingOptions,
  ],
  examples: ['svc webhooks list', 'svc webhooks list --status failed --reactor charge', 'svc webhooks list --json'],
  async handler({ options }, ctx) {
    const status = options.status as string | undefined;
    if (status !== undefined && !STATUSES.includes(status))
      throw new UsageError(`--status must be pending, delivered or failed, not ${JSON.stringify(status)}.`);
    const client = await ctx.client();
    // A name that names nothing is an error, as in svc logs, not an empty list.
    const given = options.reactor as string | undefined;
    const reactor = given === undefined ? undefined : await codeId(client, 'reactor', given);
    const query = { reactor, status, ...pageQuery(options) };
    const page = await client.webhookDeliveries.list(query);
    await ctx.output.result(page, async () => {
      await ctx.output.table(
        page.data,
        [
          { header: 'ID', value: (delivery) => delivery.id },
          { header: 'REACTOR', value: (delivery) => delivery.reactor ?? delivery.reactor_id },
          { header: 'STATUS', value: (delivery) => delivery.status },
          { header: 'ATTEMPTS', value: (delivery) => String(delivery.attempts) },
          { header: 'LAST', value: lastOutcome },
          { header: 'CALLBACK URL', value: (delivery) => delivery.callback_url },
        ],
        emptyPage(page.pagination, 'No webhook deliveries.'),
      );
      // Each delivery's attempts under the table, with their times (a row holds one line).
      for (const delivery of page.data.filter((one) => one.attempt_log.length > 0)) {
        ctx.output.line(`\n${delivery.id} (${delivery.reactor ?? delivery.reactor_id})`);
        for (const line of attemptLines(delivery)) ctx.output.line(`  ${line}`);
        if (delivery.next_attempt_at) ctx.output.line(`  next attempt at ${delivery.next_attempt_at}`);
      }
      notePages(ctx.output, page.pagination, 'deliveries');
    });
  },
});
