/**
 * The planner: svc.yaml (desired) + what svc remembers (state) + what the target holds (actual)
 * -> a Plan. A pure function: no I/O, no client, no clock; what it returns is what apply does.
 */
import type { Application, Proxy, Reactor } from '../api/types.js';
import { codeDiff, configurationDiffs, contentHash, valueDiffs, type Spec } from './compare.js';
import { ApplyError } from './errors.js';
import { closest } from './locate.js';
import { applicationSpec, proxySpec, reactorSpec, wantedApplication, wantedProxy, wantedReactor } from './specs.js';
import {
  addressOf,
  KINDS,
  type Actual,
  type Address,
  type Change,
  type Desired,
  type DesiredApplication,
  type DesiredProxy,
  type DesiredReactor,
  type FieldDiff,
  type Kind,
  ownEntry,
  type Plan,
  type PlanOptions,
  type StateEntry,
  type TargetState,
} from './types.js';

export interface PlanInput {
  desired: Desired;
  state: TargetState;
  actual: Actual;
  options?: PlanOptions;
}

type ActualOf<K extends Kind> = K extends 'applications' ? Application : K extends 'reactors' ? Reactor : Proxy;
type DesiredOf<K extends Kind> = K extends 'applications'
  ? DesiredApplication
  : K extends 'reactors'
    ? DesiredReactor
    : DesiredProxy;

interface Match<K extends Kind> {
  actual: ActualOf<K>;
  /** How it was found: the state, a rename recorded by `renamed_from`, or its exact name. */
  via: 'state' | 'name';
  entry?: StateEntry;
}

/** Marks a reference to an Application that does not exist yet: equal to no id. */
const PENDING = 'pending:';

export function plan({ desired, state, actual, options = {} }: PlanInput): Plan {
  const issues: string[] = [];
  const where = (kind: Kind, resource: { name: string; line: number }, field?: string) =>
    `${desired.file}:${resource.line} ${addressOf(kind, resource.name)}${field ? `.${field}` : ''}`;
  const ids: Record<Address, string> = {};
  const forgotten: Address[] = [];
  const changes: Change[] = [];
  const matches = new Map<Address, Match<Kind>>();
  const usedStateNames = new Map<Kind, Set<string>>(KINDS.map((kind) => [kind, new Set<string>()]));

  // 1. Identity: the state first, then `renamed_from`, then an exact name no state entry claims.
  for (const kind of KINDS) {
    const list = actual[kind] as ActualOf<Kind>[];
    const byId = new Map(list.map((item) => [item.id, item]));
    const entries = state[kind];
    for (const [name, entry] of Object.entries(entries)) if (!byId.has(entry.id)) forgotten.push(addressOf(kind, name));
    const claimed = new Set(
      Object.values(entries)
        .map((entry) => entry.id)
        .filter((id) => byId.has(id)),
    );
    const used = usedStateNames.get(kind)!;
    const byName = (name: string, resource: { name: string; line: number }): Match<Kind> | undefined => {
      const found = list.filter((item) => item.name === name && !claimed.has(item.id));
      if (found.length > 1) {
        const ids = found.map((item) => item.id).join(', ');
        issues.push(
          `${where(kind, resource)}: ${found.length} ${kind} are named "${name}" on the target (${ids}) ` +
            'and none is in .svc/state.json; delete or rename all but one',
        );
      }
      if (found.length !== 1) return undefined;
      claimed.add(found[0]!.id);
      return { actual: found[0]!, via: 'name' };
    };
    for (const resource of desired[kind] as DesiredOf<Kind>[]) {
      const address = addressOf(kind, resource.name);
      const own = ownEntry(entries, resource.name);
      const old = resource.renamedFrom === undefined ? undefined : ownEntry(entries, resource.renamedFrom);
      let match: Match<Kind> | undefined;
      if (own && byId.has(own.id)) match = { actual: byId.get(own.id)!, via: 'state', entry: own };
      else if (old && byId.has(old.id)) match = { actual: byId.get(old.id)!, via: 'state', entry: old };
      else if (resource.renamedFrom !== undefined) {
        match = byName(resource.renamedFrom, resource) ?? byName(resource.name, resource);
      } else match = byName(resource.name, resource);
      used.add(resource.name);
      if (match?.entry === old && old) used.add(resource.renamedFrom!);
      if (!match) continue;
      matches.set(address, match);
      ids[address] = match.actual.id;
    }
  }

  // 2. What each desired resource needs: nothing, a create, an update, a rename or an adoption.
  const appName = (id: string | null): string | null => {
    if (id === null) return null;
    if (id.startsWith(PENDING)) return id.slice(PENDING.length);
    const desiredName = Object.entries(ids).find(
      ([address, value]) => value === id && address.startsWith('applications.'),
    );
    if (desiredName) return desiredName[0].slice('applications.'.length);
    return actual.applications.find((app) => app.id === id)?.name ?? id;
  };
  const appRef = (name: string | null): string | null =>
    name === null ? null : (ids[addressOf('applications', name)] ?? `${PENDING}${name}`);
  const showApp = (field: string, value: unknown) =>
    field === 'application' ? (appName(value as string | null) ?? '(none)') : value;

  type SpecOf<K extends Kind> = (item: ActualOf<K>) => Spec;
  const changeOf = <K extends Kind>(kind: K, resource: DesiredOf<K>, diffs: FieldDiff[], spec: SpecOf<K>): void => {
    const address = addressOf(kind, resource.name);
    const match = matches.get(address) as Match<K> | undefined;
    if (!match) {
      changes.push({ address, kind, name: resource.name, action: 'create', diffs, dependsOn: [] });
      return;
    }
    const renamed = match.actual.name !== resource.name;
    const drift = match.entry !== undefined && match.entry.hash !== contentHash(kind, spec(match.actual));
    if (!renamed && diffs.length === 0 && match.via === 'state') return;
    changes.push({
      address,
      kind,
      name: resource.name,
      action: renamed ? 'rename' : diffs.length > 0 ? 'update' : 'adopt',
      id: match.actual.id,
      ...(renamed && { from: match.actual.name }),
      ...(match.via === 'name' && { adopted: true }),
      ...(drift && { drift: true }),
      diffs,
      dependsOn: [],
    });
  };

  for (const app of desired.applications) {
    const current = matches.get(addressOf('applications', app.name))?.actual as Application | undefined;
    const wanted = wantedApplication(app);
    const before = current ? applicationSpec(current) : undefined;
    if (before && before.type !== wanted.type) {
      issues.push(
        `${where('applications', app, 'type')}: the Application on the target is ${before.type}; ` +
          'a type cannot change in place (give it a new name to make a new Application)',
      );
      continue;
    }
    if (before && wanted.permissions.length === 0 && before.permissions.length > 0) {
      issues.push(
        `${where('applications', app, 'permissions')}: the API cannot take every permission away from an ` +
          `Application (it has ${before.permissions.join(', ')}); keep one, or give it a new name`,
      );
      continue;
    }
    const diffs = valueDiffs(before, wanted, before ? ['permissions', 'rules'] : ['type', 'permissions', 'rules']);
    changeOf(
      'applications',
      app,
      diffs.filter((diff) => before || !isEmptyList(diff)),
      applicationSpec,
    );
  }

  for (const reactor of desired.reactors) {
    const current = matches.get(addressOf('reactors', reactor.name))?.actual as Reactor | undefined;
    const before = current ? reactorSpec(current) : undefined;
    const wanted = wantedReactor(reactor, appRef);
    const diffs = [
      codeDiff('code', reactor.code.path, before?.code, wanted.code),
      ...configurationDiffs(before?.configuration, wanted.configuration),
      ...(before || wanted.application !== null ? valueDiffs(before, wanted, ['application'], showApp) : []),
    ].filter((diff): diff is FieldDiff => diff !== undefined);
    changeOf('reactors', reactor, diffs, reactorSpec);
  }

  for (const proxy of desired.proxies) {
    const current = matches.get(addressOf('proxies', proxy.name))?.actual as Proxy | undefined;
    const before = current ? proxySpec(current) : undefined;
    const wanted = wantedProxy(proxy, appRef);
    const diffs = [
      ...valueDiffs(before, wanted, ['destination_url', 'require_auth']),
      codeDiff('request_transform', proxy.request_transform?.path, before?.request_transform, wanted.request_transform),
      codeDiff(
        'response_transform',
        proxy.response_transform?.path,
        before?.response_transform,
        wanted.response_transform,
      ),
      ...configurationDiffs(before?.configuration, wanted.configuration),
      ...(before || wanted.application !== null ? valueDiffs(before, wanted, ['application'], showApp) : []),
    ].filter((diff): diff is FieldDiff => diff !== undefined);
    changeOf('proxies', proxy, diffs, proxySpec);
  }

  // 3. What the state records that svc.yaml no longer names: deleted with --prune (Applications last).
  const orphans: Address[] = [];
  const warnings: string[] = [];
  for (const kind of ['reactors', 'proxies', 'applications'] as const) {
    const list = actual[kind] as ActualOf<Kind>[];
    for (const [name, entry] of Object.entries(state[kind])) {
      const item = list.find((candidate) => candidate.id === entry.id);
      if (!item || usedStateNames.get(kind)!.has(name) || Object.values(ids).includes(entry.id)) continue;
      const address = addressOf(kind, name);
      if (!options.prune) {
        orphans.push(address);
      } else if (kind === 'applications' && entry.id === options.selfApplicationId) {
        warnings.push(`${address} is the Application whose key svc is using: not deleted.`);
      } else {
        changes.push({ address, kind, name, action: 'delete', id: entry.id, diffs: [], dependsOn: [] });
      }
    }
  }
  if (issues.length > 0) throw ApplyError.of(issues);

  linkDependencies(changes, desired, actual);
  const chosen = options.targets ? selectTargets(changes, options.targets, desired, state) : changes;
  return { changes: chosen, ids, forgotten, orphans, warnings };
}

/** Applications go before what refers to them; an Application is deleted after what used it. */
function linkDependencies(changes: Change[], desired: Desired, actual: Actual): void {
  const byAddress = new Map(changes.map((change) => [change.address, change]));
  const refs = new Map<Address, string | null>();
  for (const kind of ['reactors', 'proxies'] as const) {
    for (const resource of desired[kind]) refs.set(addressOf(kind, resource.name), resource.application);
  }
  const usersOf = (appId: string): Address[] =>
    changes
      .filter((change) => change.kind !== 'applications' && change.id !== undefined)
      .filter((change) => {
        const list: { id: string; application?: Application | null; application_id?: string | null }[] =
          actual[change.kind];
        const item = list.find((candidate) => candidate.id === change.id);
        return (item?.application?.id ?? item?.application_id) === appId;
      })
      .map((change) => change.address);
  for (const change of changes) {
    const ref = refs.get(change.address);
    if (ref && change.action !== 'delete' && byAddress.get(addressOf('applications', ref))?.action === 'create') {
      change.dependsOn.push(addressOf('applications', ref));
    }
    if (change.kind === 'applications' && change.action === 'delete' && change.id !== undefined) {
      change.dependsOn.push(...usersOf(change.id));
    }
  }
}

/** `--target`: the changes named, and the creations they depend on. */
function selectTargets(changes: Change[], targets: Address[], desired: Desired, state: TargetState): Change[] {
  const known = new Set(
    KINDS.flatMap((kind) =>
      [...desired[kind].map((item) => item.name), ...Object.keys(state[kind])].map((name) => addressOf(kind, name)),
    ),
  );
  for (const target of targets) {
    if (known.has(target)) continue;
    const suggestion = closest(target, known);
    const hint = suggestion ? ` (did you mean ${suggestion}?)` : '';
    const message =
      `--target ${target}: no such resource in ${desired.file}${hint}; ` +
      'address one as kind.name, e.g. reactors.charge';
    throw new ApplyError(message, { exitCode: 2 });
  }
  const byAddress = new Map(changes.map((change) => [change.address, change]));
  const wanted = new Set<Address>();
  const add = (address: Address) => {
    const change = byAddress.get(address);
    if (!change || wanted.has(address)) return;
    wanted.add(address);
    change.dependsOn.forEach(add);
  };
  targets.forEach(add);
  return changes
    .filter((change) => wanted.has(change.address))
    .map((change) => ({ ...change, dependsOn: change.dependsOn.filter((address) => wanted.has(address)) }));
}

function isEmptyList(diff: FieldDiff): boolean {
  return diff.type === 'value' && Array.isArray(diff.after) && diff.after.length === 0;
}
