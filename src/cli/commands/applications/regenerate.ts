import { DECLINED, announceTarget, confirm, mustAsk, yesOption } from '../../io/confirm.js';
import { defineCommand } from '../../registry.js';
import { resolveApplicationId } from '../../../requests/lookup.js';
import { applicationArg, showApplication } from './shared.js';
import { heldKeyPhrase, heldKeys, keysOwnedBy, keysStoppedBy, replaceHeldKeys } from './keys-in-use.js';

export const regenerate = defineCommand({
  name: 'regenerate',
  description:
    'issue a new key for an Application; the old one stops working at once (.svc/credentials.json is updated)',
  args: [applicationArg],
  options: [yesOption],
  async handler({ args, options }, ctx) {
    const ask = mustAsk(ctx, options.yes, `regenerating the key of Application "${args.application}"`);
    await announceTarget(ctx);
    const client = await ctx.client();
    const id = await resolveApplicationId(client, args.application);
    const target = await ctx.target();
    const held = await heldKeys(target);
    if (ask) {
      const current = await client.applications.get(id);
      const warnings = keysOwnedBy(held, id).map((entry) =>
        entry.key.source.from === 'credentials'
          ? `this is the Application of ${heldKeyPhrase(entry)}; the file will be updated with the new key.`
          : `this is the Application of ${heldKeyPhrase(entry)}: commands with it fail (401) until given the new key.`,
      );
      const question = `Regenerate the key of Application "${current.name}" (${id})? The current one stops working at once.`;
      if (!(await confirm(ctx, question, warnings))) return DECLINED;
    }
    const [app, stopped] = await keysStoppedBy(target, held, id, () => client.applications.regenerate(id));
    // The new key is shown before any file is touched: if the update fails, the key is not lost.
    await ctx.output.result(app, () => showApplication(ctx.output, app));
    if (app.key === undefined) return;
    for (const line of await replaceHeldKeys(stopped, app.key)) ctx.output.note(line);
  },
});
