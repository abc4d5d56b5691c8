import type { ApplyFlags } from '../apply-command.js';
import { defineCommand } from '../registry.js';

export const apply = defineCommand({
  name: 'apply',
  description: 'make the target match svc.yaml: show the plan, then apply it (Applications, reactors, proxies)',
  args: [{ name: 'plan', description: 'a plan saved with --out, to apply exactly as it was shown', optional: true }],
  options: [
    { flags: '-f, --file <file>', description: 'the config: svc.yaml (or JSON)', default: 'svc.yaml' },
    { flags: '--dry-run', description: 'show the plan only' },
    { flags: '--prune', description: 'delete what svc created earlier and svc.yaml no longer names' },
    { flags: '--watch', description: 'after applying, apply each save of svc.yaml or a file it names' },
    { flags: '--detailed-exitcode', description: 'exit 0: no changes, 2: changes (pending or applied), 1: errors' },
    {
      flags: '--target <kind.name>',
      description: 'only this resource (and the Applications it needs)',
      repeatable: true,
    },
    { flags: '--out <plan.json>', description: 'save the plan (nothing is applied); `svc apply plan.json` applies it' },
    { flags: '--yes', description: 'apply deletions without asking (needed without a terminal)' },
    { flags: '--show-secrets', description: 'print the keys of new Applications (always in .svc/keys.json)' },
    {
      flags: '--allow-outside-project',
      description: 'read files svc.yaml names outside its folder (symlinks resolved) too',
    },
  ],
  examples: [
    'svc apply --dry-run',
    'svc apply --prune --yes',
    'svc apply --out plan.json && svc apply plan.json',
    'svc apply --watch',
  ],
  async handler({ args, options }, ctx) {
    const flags: ApplyFlags = options;
    const { applyCommand } = await import('../apply-command.js');
    return applyCommand(args.plan, flags, ctx);
  },
});
