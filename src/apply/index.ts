/**
 * The apply engine: svc.yaml -> plan -> changes through the API client (never the emulator), the
 * same path for the emulator and a remote server.
 *
 *   const { plan, result, exitCode } = await runApply({ client, file: 'svc.yaml', cwd, env });
 *   const watcher = watchConfig({ client, file: 'svc.yaml', cwd, env, applied: desired, onEvent });
 *
 * or step by step: `prepareApply()` loads and plans (nothing changes), `prepared.apply()` executes
 * and records the state and keys.
 */
import { prepareApply, type ApplyOptions, type ApplyResult, type PreparedApply } from './session.js';

export { applyDocument, DOCUMENT_VERSION, type ApplyDocument } from './document.js';
export { ApplyError } from './errors.js';
export { applyToFreshTarget } from './fresh.js';
export { executePlan, describeFailure, type ChangeOutcome, type ExecuteOptions, type Execution } from './execute.js';
export { importTarget, type ImportOptions, type ImportResult } from './import.js';
export type { CreatedKey } from './keys.js';
export { loadConfig, type LoadOptions } from './load.js';
export { plan, type PlanInput } from './plan.js';
export { prepareFromPlanFile, writePlanFile } from './plan-file.js';
export { SCHEMA_FILE } from './schema.js';
export {
  identifyTarget,
  observe,
  prepareApply,
  prepareFor,
  type ApplyOptions,
  type ApplyResult,
  type PreparedApply,
  type Target,
} from './session.js';
export * from './types.js';
export { watchConfig, type ApplyWatcher, type WatchEvent, type WatchOptions } from './watch.js';

/**
 * 0 when all went well; with `detailed`, 2 when the plan had changes (pending with a dry run,
 * applied otherwise); 1 when a change failed.
 */
export function exitCodeOf(
  prepared: Pick<PreparedApply, 'plan'>,
  result: Pick<ApplyResult, 'status'> | undefined,
  detailed: boolean,
): number {
  if (result?.status === 'failed') return 1;
  return detailed && prepared.plan.changes.length > 0 ? 2 : 0;
}

/** Load, plan and (unless `dryRun`) apply in one call: what `svc serve --config` does at start. */
export async function runApply(
  options: ApplyOptions & { dryRun?: boolean; detailedExitCode?: boolean },
): Promise<{ prepared: PreparedApply; result: ApplyResult | undefined; exitCode: number }> {
  const prepared = await prepareApply(options);
  let result: ApplyResult | undefined;
  if (options.dryRun) await prepared.release();
  else result = await prepared.apply();
  return { prepared, result, exitCode: exitCodeOf(prepared, result, options.detailedExitCode ?? false) };
}
