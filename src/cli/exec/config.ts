/**
 * svc.yaml applied to `svc exec`'s emulator: the apply engine's loader, planner and executor (the
 * checks and messages of `svc apply` and `svc serve --config`), with no state or keys file: the
 * emulator is new and in memory, there is nothing for a later apply to remember.
 */
import { ApplyError, applyToFreshTarget, loadConfig, type CreatedKey } from '../../apply/index.js';
import type { ApiClient } from '../../client/index.js';
import { UserError } from '../io/errors.js';
import { keyVariables } from './environment.js';

export interface ExecConfigOptions {
  client: ApiClient;
  /** svc.yaml, relative to `cwd`. */
  file: string;
  cwd: string;
  env: Record<string, string | undefined>;
  allowOutsideProject?: boolean;
}

/** Applies the file; resolves to the keys of the Applications it created. Any failure is the user's to fix. */
export async function applyExecConfig(options: ExecConfigOptions): Promise<CreatedKey[]> {
  const { client, file, cwd, env } = options;
  let desired: Awaited<ReturnType<typeof loadConfig>>;
  try {
    desired = await loadConfig(file, { cwd, env, ...(options.allowOutsideProject && { allowOutsideProject: true }) });
  } catch (error) {
    if (error instanceof ApplyError) throw new UserError(error.message, { cause: error });
    throw error;
  }
  // Before anything starts: two names that make one variable.
  keyVariables(desired.applications.map((app) => app.name));
  const execution = await applyToFreshTarget(desired, client);
  const failed = execution.outcomes.find((outcome) => outcome.status !== 'applied');
  if (failed !== undefined) {
    throw new UserError(`${file} did not apply: ${failed.address}: ${failed.error ?? failed.status}`);
  }
  return execution.keys;
}
