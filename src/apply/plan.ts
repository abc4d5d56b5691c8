/**
 * The planner: svc.yaml (desired) + what svc remembers (state) + what the target holds (actual)
 * -> a Plan. A pure function: no I/O, no client, no clock; what it returns is what apply does.
 */
import type { Application, Proxy, Reactor } from '../api/types.js';
import { codeDiff, configurationDiffs, contentHash, valueDiffs, type Spec } from './compare.js';
import { ApplyError } from './errors.js';
import { closest } from './locate.js';
import { applicationSpec, proxySpec, reactorSpec, wantedApplication, wantedProxy, wantedReactor } from './specs.js';
import { type ActualOf, type DesiredOf, type Identity, identify, type Match, type Where } from './identity.js';
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
  type HeldChange,
  type Kind,
  ownEntry,
  parseAddress,
  type Plan,
  type PlanOptions,
  type TargetState,
} from './types.js';

export interface PlanInput {
  desired: Desired;
  state: TargetState;
  actual: Actual;
  options?: PlanOptions;
}

/** Marks a reference to an Application that does not exist yet: equal to no id. */
const PENDING = 'pending:';

export function plan({ desired, state, actual, options = {} }: PlanInput): Plan {
  const issues: string[] = [];
  const where: Where = (kind, resource, field) =>
    `${desired.file}:${resource.line} ${addressOf(kind, resource.name)}${field ? `.${field}` : ''}`;
  // 1. Identity: the state first, then `renamed_from`, then an exact name no state entry claims.
  const identity = identify({ desired, state, actual, where, issues });
  // 2. What each desired resource needs: nothing, a create, an update, a rename or an adoption.
  const changes = new Changes(actual, identity, where, issues);
  for (const app of desired.applications) changes.application(app);
  for (const reactor of desired.reactors) changes.reactor(reactor);
  for (const proxy of desired.proxies) changes.proxy(proxy);
  // 3. What the state records that svc.yaml no longer names: deleted with --prune (Applications last).
  const held = heldResources(desired, state, actual);
  const { orphans, warnings } = changes.leftInState(state, options, new Set(held.map((each) => each.address)));
  if (issues.length > 0) throw ApplyError.of(issues, { of: desired.file });

  const all = changes.list;
  linkDependencies(all, desired, actual);
  const chosen = options.targets ? selectTargets(all, options.targets, desired, state) : all;
  const plan: Plan = { changes: chosen, ids: identity.ids, forgotten: identity.forgotten, orphans, warnings };
  return held.length > 0 ? { ...plan, held } : plan;
}

/** The resources held back (a file of theirs does not load), each with whether the target has it (kept as it is). */
function heldResources(desired: Desired, state: TargetState, actual: Actual): HeldChange[] {
  return (desired.held ?? []).map((each) => {
    const parsed = parseAddress(each.address)!;
    const list: { id: string; name: string }[] = actual[parsed.kind];
    const entry = ownEntry(state[parsed.kind], parsed.name);
    const kept = list.some((item) => (entry ? item.id === entry.id : item.name === parsed.name));
    return { ...each, kept };
  });
}

/** The changes of a plan, found one desired resource at a time against what identity matched. */
class Changes {
  readonly list: Change[] = [];

  constructor(
    private readonly actual: Actual,
    private readonly identity: Identity,
    private readonly where: Where,
    private readonly issues: string[],
  ) {}

  application(app: DesiredApplication): void {
    const current = this.current<Application>('applications', app.name);
    const wanted = wantedApplication(app);
    const before = current ? applicationSpec(current) : undefined;
    if (before && before.type !== wanted.type) {
      this.issues.push(
        `${this.where('applications', app, 'type')}: the Application on the target is ${before.type}; ` +
          'a type cannot change in place (give it a new name to make a new Application)',
      );
      return;
    }
    if (before && wanted.permissions.length === 0 && before.permissions.length > 0) {
      this.issues.push(
        `${this.where('applications', app, 'permissions')}: the API cannot take every permission away from an ` +
          `Application (it has ${before.permissions.join(', ')}); keep one, or give it a new name`,
      );
      return;
    }
    const diffs = valueDiffs(before, wanted, before ? ['permissions', 'rules'] : ['type', 'permissions', 'rules']);
    this.add(
      'applications',
      app,
      diffs.filter((diff) => before || !isEmptyList(diff)),
      applicationSpec,
    );
  }

  reactor(reactor: DesiredReactor): void {
    const current = this.current<Reactor>('reactors', reactor.name);
    const before = current ? reactorSpec(current) : undefined;
    const wanted = wantedReactor(reactor, this.appRef);
    const diffs = [
      codeDiff('code', reactor.code.path, before?.code, wanted.code),
      ...configurationDiffs(before?.configuration, wanted.configuration),
      ...(before || wanted.application !== null ? valueDiffs(before, wanted, ['application'], this.showApp) : []),
    ].filter((diff): diff is FieldDiff => diff !== undefined);
    this.add('reactors', reactor, diffs, reactorSpec);
  }

  proxy(proxy: DesiredProxy): void {
    const current = this.current<Proxy>('proxies', proxy.name);
    const before = current ? proxySpec(current) : undefined;
    const wanted = wantedProxy(proxy, this.appRef);
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
      ...(before || wanted.application !== null ? valueDiffs(before, wanted, ['application'], this.showApp) : []),
    ].filter((diff): diff is FieldDiff => diff !== undefined);
    this.add('proxies', proxy, diffs, proxySpec);
  }

  /** What the state records that svc.yaml no longer names: orphans, or deletes with --prune. */
  leftInState(
    state: TargetState,
    options: PlanOptions,
    held: ReadonlySet<Address>,
  ): { orphans: Address[]; warnings: string[] } {
    const orphans: Address[] = [];
    const warnings: string[] = [];
    const { ids, usedStateNames } = this.identity;
    for (const kind of ['reactors', 'proxies', 'applications'] as const) {
      const list = this.actual[kind] as ActualOf<Kind>[];
      for (const [name, entry] of Object.entries(state[kind])) {
        const item = list.find((candidate) => candidate.id === entry.id);
        if (!item || usedStateNames.get(kind)!.has(name) || Object.values(ids).includes(entry.id)) continue;
        const address = addressOf(kind, name);
        // Still in svc.yaml, only held back: it keeps what the target has.
        if (held.has(address)) continue;
        if (!options.prune) {
          orphans.push(address);
        } else if (kind === 'applications' && entry.id === options.selfApplicationId) {
          warnings.push(`${address} is the Application whose key svc is using: not deleted.`);
        } else {
          this.list.push({ address, kind, name, action: 'delete', id: entry.id, diffs: [], dependsOn: [] });
        }
      }
    }
    return { orphans, warnings };
  }

  private current<T>(kind: Kind, name: string): T | undefined {
    return this.identity.matches.get(addressOf(kind, name))?.actual as T | undefined;
  }

  /** A create, or an update, rename or adoption of what was matched; nothing when it is as wanted. */
  private add<K extends Kind>(kind: K, resource: DesiredOf<K>, diffs: FieldDiff[], spec: (item: ActualOf<K>) => Spec) {
    const address = addressOf(kind, resource.name);
    const match = this.identity.matches.get(address) as Match<K> | undefined;
    if (!match) {
      this.list.push({ address, kind, name: resource.name, action: 'create', diffs, dependsOn: [] });
      return;
    }
    const renamed = match.actual.name !== resource.name;
    const drift = match.entry !== undefined && match.entry.hash !== contentHash(kind, spec(match.actual));
    if (!renamed && diffs.length === 0 && match.via === 'state') return;
    this.list.push({
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
  }

  /** The name an Application reference shows: the desired name of its id, else the target's, else the id. */
  private readonly appName = (id: string | null): string | null => {
    if (id === null) return null;
    if (id.startsWith(PENDING)) return id.slice(PENDING.length);
    const desiredName = Object.entries(this.identity.ids).find(
      ([address, value]) => value === id && address.startsWith('applications.'),
    );
    if (desiredName) return desiredName[0].slice('applications.'.length);
    return this.actual.applications.find((app) => app.id === id)?.name ?? id;
  };

  /** The id a reference by name means: the matched Application's, or a pending one to be created. */
  private readonly appRef = (name: string | null): string | null =>
    name === null ? null : (this.identity.ids[addressOf('applications', name)] ?? `${PENDING}${name}`);

  private readonly showApp = (field: string, value: unknown) =>
    field === 'application' ? (this.appName(value as string | null) ?? '(none)') : value;
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
