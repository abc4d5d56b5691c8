import { DECLINED, announceTarget, confirm, mustAsk, yesOption } from '../../io/confirm.js';
import { defineCommand } from '../../registry.js';
import { resolveApplicationId } from '../../../requests/lookup.js';
import { applicationArg } from './shared.js';
import { deletedKeyLines, heldKeyPhrase, heldKeys, keysOwnedBy, keysStoppedBy } from './keys-in-use.js';

export const remove = defineCommand({
  name: 'delete',
  aliases: ['rm'],
  description: 'delete an Application (its key stops working at once)',
  args: [applicationArg],
  options: [yesOption],
  async handler({ args, options }, ctx) {
    const ask = mustAsk(ctx, options.yes, `deleting Application "${args.application}"`);
    await announceTarget(ctx);
    const client = await ctx.client();
    const id = await resolveApplicationId(client, args.application);
    const target = await ctx.target();
    const held = await heldKeys(target);
    if (ask) {
      const app = await client.applications.get(id);
      const warnings = keysOwnedBy(held, id).map(
        (entry) =>
          `this is the Application of ${heldKeyPhrase(entry)}: once it is deleted, commands with that key fail (401).`,
      );
      if (!(await confirm(ctx, `Delete Application "${app.name}" (${id})?`, warnings))) return DECLINED;
    }
    const [, stopped] = await keysStoppedBy(target, held, id, () => client.applications.delete(id));
    await ctx.output.result({ id, deleted: true }, () => ctx.output.line(`Deleted Application ${id}.`));
    for (const line of deletedKeyLines(stopped)) ctx.output.note(line);
  },
});
