/**
 * The planner's first step: which resource on the target each one in svc.yaml is. The state first,
 * then `renamed_from`, then an exact name no state entry claims. Pure, as the planner is.
 */
import type { Application, Proxy, Reactor } from '../api/types.js';
import {
  addressOf,
  KINDS,
  type Actual,
  type Address,
  type Desired,
  type DesiredApplication,
  type DesiredProxy,
  type DesiredReactor,
  type Kind,
  ownEntry,
  type StateEntry,
  type TargetState,
} from './types.js';

export type ActualOf<K extends Kind> = K extends 'applications' ? Application : K extends 'reactors' ? Reactor : Proxy;
export type DesiredOf<K extends Kind> = K extends 'applications'
  ? DesiredApplication
  : K extends 'reactors'
    ? DesiredReactor
    : DesiredProxy;

export interface Match<K extends Kind> {
  actual: ActualOf<K>;
  /** How it was found: the state, a rename recorded by `renamed_from`, or its exact name. */
  via: 'state' | 'name';
  entry?: StateEntry;
}

export interface Identity {
  /** The resource on the target each desired address is. */
  matches: Map<Address, Match<Kind>>;
  /** The id of each desired address found. */
  ids: Record<Address, string>;
  /** State entries whose resource is no longer on the target. */
  forgotten: Address[];
  /** The state names svc.yaml still uses (its names, and the old names of renames found by state). */
  usedStateNames: Map<Kind, Set<string>>;
}

/** Where a message places a resource (or one of its fields): `svc.yaml:12 reactors.charge.code`. */
export type Where = (kind: Kind, resource: { name: string; line: number }, field?: string) => string;

export interface IdentityInput {
  desired: Desired;
  state: TargetState;
  actual: Actual;
  where: Where;
  /** Where a name that is ambiguous on the target is said. */
  issues: string[];
}

export function identify(input: IdentityInput): Identity {
  const identity: Identity = { matches: new Map(), ids: {}, forgotten: [], usedStateNames: new Map() };
  for (const kind of KINDS) identifyKind(kind, input, identity);
  return identity;
}

function identifyKind(kind: Kind, input: IdentityInput, identity: Identity): void {
  const list = input.actual[kind] as ActualOf<Kind>[];
  const byId = new Map(list.map((item) => [item.id, item]));
  const entries = input.state[kind];
  for (const [name, entry] of Object.entries(entries)) {
    if (!byId.has(entry.id)) identity.forgotten.push(addressOf(kind, name));
  }
  const claimed = new Set(
    Object.values(entries)
      .map((entry) => entry.id)
      .filter((id) => byId.has(id)),
  );
  const used = new Set<string>();
  identity.usedStateNames.set(kind, used);
  const byName = (name: string, resource: { name: string; line: number }): Match<Kind> | undefined => {
    const found = list.filter((item) => item.name === name && !claimed.has(item.id));
    if (found.length > 1) {
      const ids = found.map((item) => item.id).join(', ');
      input.issues.push(
        `${input.where(kind, resource)}: ${found.length} ${kind} are named "${name}" on the target (${ids}) ` +
          'and none is in .svc/state.json; delete or rename all but one',
      );
    }
    if (found.length !== 1) return undefined;
    claimed.add(found[0]!.id);
    return { actual: found[0]!, via: 'name' };
  };
  for (const resource of input.desired[kind] as DesiredOf<Kind>[]) {
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
    identity.matches.set(address, match);
    identity.ids[address] = match.actual.id;
  }
}
