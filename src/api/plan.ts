/**
 * A plan of `svc apply` as it is shown: the changes (`svc apply --json` prints them, with the
 * engine's own fields beside), each change's outcome, and the fields they touch. The apply engine
 * builds them (src/apply: its Change and ChangeOutcome extend these) and the UI paints them
 * (src/ui/render-plan.ts), neither importing the other. Configuration values never appear: only
 * which keys changed.
 */

export type PlanAction = 'create' | 'update' | 'rename' | 'adopt' | 'delete';

/** A field as the plan shows it. */
export type PlanFieldDiff =
  | { field: string; type: 'value'; before?: unknown; after?: unknown }
  | { field: string; type: 'secret'; change: 'added' | 'removed' | 'changed' }
  | {
      field: string;
      type: 'code';
      path?: string;
      change: 'added' | 'removed' | 'changed';
      diff?: string;
      lines?: number;
    };

export interface PlanChangeView {
  /** `reactors.charge`: the resource's place in svc.yaml. */
  address: string;
  action: PlanAction;
  /** The name it has on the target, when it is renamed. */
  from?: string;
  /** Found on the target by its exact name, not through the state: svc records it from now on. */
  adopted?: boolean;
  /** It differs from what svc last applied: someone changed it outside svc. */
  drift?: boolean;
  diffs: PlanFieldDiff[];
}

export interface PlanView {
  changes: PlanChangeView[];
  /** Resources the state records that svc.yaml no longer names: `--prune` deletes them. */
  orphans: string[];
  warnings: string[];
}

/** How one change went. */
export interface OutcomeView {
  address: string;
  action: PlanAction;
  status: 'applied' | 'failed' | 'skipped';
  /** Time of its requests, in milliseconds. */
  ms: number;
  /** Why it failed or was skipped (never a key or a configuration value). */
  error?: string;
}
