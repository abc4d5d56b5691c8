/** What an import or a reset changed (or, in a dry run, would), as lines a person reads like a plan. */
import type { StatePlan } from '../../../api/state.js';
import type { Output } from '../../io/output.js';

const SIGN = { create: '+', update: '~', delete: '-' } as const;
const SINGULAR = { applications: 'application', reactors: 'reactor', proxies: 'proxy', tokens: 'token' } as const;
/** Past this many token lines, the rest are counted. */
const TOKEN_LINES = 20;

export function printPlan(output: Output, plan: StatePlan, file?: string): void {
  let tokens = 0;
  for (const change of plan.changes) {
    if (change.kind === 'tokens' && ++tokens > TOKEN_LINES) continue;
    const name = change.name === null ? '' : ` ${change.name}`;
    output.line(`  ${SIGN[change.action]} ${SINGULAR[change.kind]}${name} (${change.id})`);
  }
  if (tokens > TOKEN_LINES) output.line(`  ... and ${tokens - TOKEN_LINES} more token changes`);
  for (const kept of plan.kept)
    output.line(`  = ${SINGULAR[kept.kind]} ${kept.name ?? ''} (${kept.id}) kept: ${kept.reason}`);
  const count = (action: string) => plan.changes.filter((change) => change.action === action).length;
  const [add, change, remove] = [count('create'), count('update'), count('delete')];
  const from = file ? ` from ${file}` : '';
  if (plan.dry_run)
    output.line(
      `Plan${from}: ${add} to add, ${change} to change, ${remove} to delete, ${plan.unchanged} unchanged. Nothing changed (--dry-run).`,
    );
  else
    output.line(
      `${file ? 'Imported' : 'Reset'}${from}: ${add} added, ${change} changed, ${remove} deleted, ${plan.unchanged} unchanged.`,
    );
}
