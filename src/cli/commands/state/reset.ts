import { DECLINED, confirm, mustAsk, yesOption } from '../../io/confirm.js';
import { defineCommand } from '../../registry.js';
import { printPlan } from './plan.js';

export const reset = defineCommand({
  name: 'reset',
  description:
    "empty the tenant: its Applications (but the management key's and the bootstrap ones), reactors, proxies, tokens",
  options: [yesOption],
  examples: ['svc state export backup.json && svc state reset --yes'],
  async handler({ options }, ctx) {
    const ask = mustAsk(ctx, options.yes === true, "resetting the tenant's state");
    const client = await ctx.client();
    if (ask) {
      const plan = await client.state.reset({ dryRun: true });
      const deleted = plan.changes.length;
      if (deleted === 0) {
        ctx.output.line('Nothing to reset: the tenant holds only what a reset keeps.');
        return;
      }
      printPlan(ctx.output, plan);
      if (!(await confirm(ctx, `Delete these ${deleted} resources of ${client.baseUrl}?`))) return DECLINED;
    }
    const plan = await client.state.reset();
    await ctx.output.result(plan, () => printPlan(ctx.output, plan));
  },
});
