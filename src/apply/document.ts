import type { ChangeOutcome } from './execute.js';
import type { ApplyResult, PreparedApply } from './session.js';
import { countChanges, type Change, type Counts } from './types.js';

/**
 * The version of the `--json` document; bumped when a field changes meaning or goes. 2: its fields
 * are snake_case as the API's are (a change's `dependsOn` is `depends_on`).
 */
export const DOCUMENT_VERSION = 2;

/** A change as the document and a saved plan have it: the engine's Change, its fields snake_case. */
export type ChangeDocument = Omit<Change, 'dependsOn'> & { depends_on: Change['dependsOn'] };

/** A change in the document's shape (snake_case, as the API's fields). */
export function changeDocument(change: Change): ChangeDocument {
  const { dependsOn, ...rest } = change;
  return { ...rest, depends_on: dependsOn };
}

/**
 * What `svc apply --json` prints: `{ schema_version, plan, result }`. `result` is null when nothing
 * was applied (`--dry-run`, `--out`). No key and no configuration value is in it: the plan names
 * configuration keys only, and the keys of new Applications are in `.svc/keys.json`.
 */
export interface ApplyDocument {
  schema_version: number;
  plan: {
    config: string;
    target: { url: string; tenant_id: string };
    changes: ChangeDocument[];
    summary: Counts;
    orphans: string[];
    warnings: string[];
  };
  result: {
    status: ApplyResult['status'];
    changes: ChangeOutcome[];
    /** How many new Application keys were written to `keys_file`. */
    new_keys: number;
    keys_file: string;
    state_file: string;
  } | null;
}

export function applyDocument(prepared: PreparedApply, result: ApplyResult | undefined): ApplyDocument {
  const { plan, target, desired } = prepared;
  return {
    schema_version: DOCUMENT_VERSION,
    plan: {
      config: desired.file,
      target: { url: target.url, tenant_id: target.tenantId },
      changes: plan.changes.map(changeDocument),
      summary: countChanges(plan),
      orphans: plan.orphans,
      warnings: plan.warnings,
    },
    result: result
      ? {
          status: result.status,
          changes: result.outcomes,
          new_keys: result.keys.length,
          keys_file: result.keysFile,
          state_file: result.stateFile,
        }
      : null,
  };
}
