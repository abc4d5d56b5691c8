/**
 * One apply, start to end: load svc.yaml, learn the target (base URL, tenant), read the state,
 * list what the target holds, plan; then, when the caller says so, execute and record the state
 * and the new keys. The CLI prints and asks in between; `svc serve --config` calls it directly.
 */
import type { ApiClient } from '../client/index.js';
import { executePlan, type ChangeOutcome, type ExecuteOptions, type KeyKeeper } from './execute.js';
import { KeysFile, lostKeys, type CreatedKey } from './keys.js';
import { loadConfig, type LoadOptions } from './load.js';
import { lockApply } from './lock.js';
import { plan as makePlan } from './plan.js';
import { StateFile, type TargetKey } from './state.js';
import { parseAddress, setEntry } from './types.js';
import type { Actual, Address, Desired, Plan, PlanOptions, TargetState } from './types.js';

export interface ApplyOptions {
  client: ApiClient;
  /** svc.yaml (or a JSON file), relative to `cwd`. */
  file: string;
  cwd: string;
  /** For `${env:NAME}`. */
  env: Record<string, string | undefined>;
  /** Read files outside svc.yaml's folder too (load.ts). */
  allowOutsideProject?: boolean;
  /** Hold back a resource whose file does not load, and apply the rest (load.ts; watching does). */
  holdBroken?: boolean;
  prune?: boolean;
  targets?: Address[];
}

/** The target: its base URL and tenant, and the Application whose key svc is using. */
export interface Target extends TargetKey {
  selfApplicationId: string;
}

export interface ApplyResult {
  status: 'applied' | 'failed' | 'no-changes';
  outcomes: ChangeOutcome[];
  /** Keys of the Applications created (also written to `keysFile`); never printed unless asked. */
  keys: CreatedKey[];
  keysFile: string;
  stateFile: string;
}

export interface PreparedApply {
  desired: Desired;
  target: Target;
  plan: Plan;
  options: Pick<ApplyOptions, 'prune' | 'targets'>;
  /** Runs the plan, then records the state and the keys; then releases the folder's apply lock. */
  apply(options?: Pick<ExecuteOptions, 'onOutcome' | 'signal' | 'concurrency'>): Promise<ApplyResult>;
  /**
   * Releases the apply lock (lock.ts) without applying: a dry run, a saved plan, a refusal. Whoever
   * prepares calls this or apply(); calling it again does nothing.
   */
  release(): Promise<void>;
}

/** Loads, locks the folder's applies (lock.ts), observes and plans; nothing is changed until `apply()`. */
export async function prepareApply(options: ApplyOptions): Promise<PreparedApply> {
  const desired = await loadConfig(options.file, loadOptionsOf(options));
  return prepareFor(desired, options);
}

/** What loadConfig takes of an apply's options. */
export function loadOptionsOf(
  options: Pick<ApplyOptions, 'cwd' | 'env' | 'allowOutsideProject' | 'holdBroken'>,
): LoadOptions {
  const { cwd, env, allowOutsideProject, holdBroken } = options;
  return {
    cwd,
    env,
    ...(allowOutsideProject !== undefined && { allowOutsideProject }),
    ...(holdBroken !== undefined && { holdBroken }),
  };
}

/** prepareApply for svc.yaml already loaded (watch reloads it itself). */
export async function prepareFor(
  desired: Desired,
  options: Omit<ApplyOptions, 'file' | 'cwd' | 'env' | 'allowOutsideProject' | 'holdBroken'>,
): Promise<PreparedApply> {
  const { client } = options;
  const release = await lockApply(desired.dir);
  try {
    const [target, actual] = await Promise.all([identifyTarget(client), observe(client)]);
    const stateFile = StateFile.beside(desired.dir);
    const keysFile = KeysFile.beside(desired.dir);
    const state = await stateFile.read(target);
    const journal = lostKeys(await keysFile.pending(target), await keysFile.read(target), actual.applications);
    const planOptions: PlanOptions = {
      ...(options.prune !== undefined && { prune: options.prune }),
      ...(options.targets !== undefined && { targets: options.targets }),
      selfApplicationId: target.selfApplicationId,
    };
    const plan = makePlan({ desired, state, actual, options: planOptions });
    // Said in the plan (and so in a dry run); recorded in keys.json when the plan is applied.
    plan.warnings.push(...journal.lost.map((lost) => `${lost.message}.`));
    const files = { state: stateFile, keys: keysFile };
    return {
      desired,
      target,
      plan,
      options: {
        ...(options.prune !== undefined && { prune: options.prune }),
        ...(options.targets !== undefined && { targets: options.targets }),
      },
      apply: async (run = {}) => {
        try {
          await keysFile.settle(target, journal.lost, journal.dropped);
          const keeper = keyKeeper(files, target, actual);
          return await applyPlan(plan, desired, target, client, files, { ...run, keys: keeper });
        } finally {
          await release();
        }
      },
      release,
    };
  } catch (error) {
    await release();
    throw error;
  }
}

interface ApplyFiles {
  state: StateFile;
  keys: KeysFile;
}

async function applyPlan(
  plan: Plan,
  desired: Desired,
  target: Target,
  client: ApiClient,
  { state: stateFile, keys: keysFile }: ApplyFiles,
  run: Pick<ExecuteOptions, 'onOutcome' | 'signal' | 'concurrency' | 'keys'>,
): Promise<ApplyResult> {
  const execution = await executePlan(plan, desired, { client, ...run });
  const applied = plan.changes.filter((_, i) => execution.outcomes[i]!.status === 'applied');
  if (applied.length > 0 || plan.forgotten.length > 0) {
    await stateFile.update(target, (state) => recordOutcomes(state, plan, applied, execution.ids, execution.hashes));
  }
  const apps = applied.filter((change) => change.kind === 'applications');
  await keysFile.update(target, {
    renamed: apps.filter((change) => change.action === 'rename').map((change) => [change.from!, change.name]),
    deleted: apps.filter((change) => change.action === 'delete').map((change) => change.name),
  });
  const failed = execution.outcomes.some((outcome) => outcome.status !== 'applied');
  return {
    status: failed ? 'failed' : plan.changes.length === 0 ? 'no-changes' : 'applied',
    outcomes: execution.outcomes,
    keys: execution.keys,
    keysFile: keysFile.file,
    stateFile: stateFile.file,
  };
}

/**
 * How an apply keeps the keys of the Applications it creates (execute.ts awaits each step): the
 * create journaled in keys.json before its request, with the ids the Applications of that name have
 * now; the key saved as soon as it is back, then the Application recorded in the state, so that an
 * apply killed at any point leaves the next one the key, or the journal that names the key lost.
 */
function keyKeeper(files: ApplyFiles, target: Target, actual: Actual): KeyKeeper {
  return {
    creating: (name) => {
      const existing = actual.applications.filter((app) => app.name === name).map((app) => app.id);
      return files.keys.creating(target, name, existing);
    },
    refused: (name) => files.keys.refused(target, name),
    // The state first: a key in keys.json is always of an Application the state records, and one the
    // state records with no key saved is still journaled (lostKeys names it).
    created: async (key, hash) => {
      await files.state.update(target, (state) => {
        setEntry(state.applications, key.name, { id: key.id, hash });
      });
      await files.keys.created(target, key);
    },
  };
}

/** The state after a plan: forgotten entries dropped, then each applied change recorded. */
function recordOutcomes(
  state: TargetState,
  plan: Plan,
  applied: Plan['changes'],
  ids: Record<Address, string>,
  hashes: Record<Address, string>,
): void {
  for (const address of plan.forgotten) {
    const parsed = parseAddress(address);
    if (parsed && Object.hasOwn(state[parsed.kind], parsed.name)) delete state[parsed.kind][parsed.name];
  }
  for (const change of applied) {
    const entries = state[change.kind];
    if (change.action === 'delete') {
      delete entries[change.name];
      continue;
    }
    const id = ids[change.address]!;
    // A rename leaves the old name's entry behind: the id now lives under the new name only.
    for (const [name, entry] of Object.entries(entries))
      if (entry.id === id && name !== change.name) delete entries[name];
    setEntry(entries, change.name, { id, hash: hashes[change.address]! });
  }
}

/** Which server and tenant the client talks to, from the key's own Application. */
export async function identifyTarget(client: ApiClient): Promise<Target> {
  const self = await client.applications.self();
  return { url: client.baseUrl, tenantId: self.tenant_id, selfApplicationId: self.id };
}

/** Everything the target holds of the three kinds. */
export async function observe(client: ApiClient): Promise<Actual> {
  const [applications, reactors, proxies] = await Promise.all([
    client.applications.all(),
    client.reactors.all(),
    client.proxies.all(),
  ]);
  return { applications, reactors, proxies };
}
