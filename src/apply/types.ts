/**
 * The shapes the apply engine passes between its steps: what svc.yaml asks for (Desired), what the
 * target holds (Actual), what svc remembers (TargetState), and the Plan between them. Plans and
 * state are JSON-serialisable and never hold a key or a configuration value.
 */
import type { AccessRule, Application, Proxy, Reactor } from '../api/types.js';
import type { ApplicationType } from '../api/permissions.js';
import type { PlanAction, PlanChangeView, PlanFieldDiff } from '../api/plan.js';

/** The three sections of svc.yaml, which are also the first part of an address. */
export const KINDS = ['applications', 'reactors', 'proxies'] as const;
export type Kind = (typeof KINDS)[number];

/** `reactors.charge`: a resource's place in svc.yaml, and its name in plans and state. */
export type Address = string;

export function addressOf(kind: Kind, name: string): Address {
  return `${kind}.${name}`;
}

/** Splits an address; undefined when it does not start with a known kind. */
export function parseAddress(address: string): { kind: Kind; name: string } | undefined {
  const dot = address.indexOf('.');
  const kind = address.slice(0, dot) as Kind;
  return dot > 0 && KINDS.includes(kind) && dot < address.length - 1
    ? { kind, name: address.slice(dot + 1) }
    : undefined;
}

/** A file svc.yaml names (or svc.yaml itself), as read when it was loaded. */
export interface SourceFile {
  /** As written in svc.yaml (svc.yaml's own: as given), relative to svc.yaml's folder. */
  path: string;
  absolute: string;
  /** SHA-256 of the contents (hex). */
  digest: string;
}

/** A code file's contents and the path it came from, for diffs and messages. */
export interface CodeRef {
  path: string;
  code: string;
}

interface DesiredBase {
  name: string;
  /** `renamed_from`: the name this resource had before, so that svc renames it rather than recreate it. */
  renamedFrom?: string;
  /** Line of the resource's key in svc.yaml (1-based), for messages. */
  line: number;
}

export interface DesiredApplication extends DesiredBase {
  type: ApplicationType;
  permissions: string[];
  rules: AccessRule[];
}

export interface DesiredReactor extends DesiredBase {
  code: CodeRef;
  configuration: Record<string, string>;
  /** The name of an Application of the same file, or null. */
  application: string | null;
}

export interface DesiredProxy extends DesiredBase {
  destination_url: string;
  request_transform: CodeRef | null;
  response_transform: CodeRef | null;
  configuration: Record<string, string> | null;
  application: string | null;
  require_auth: boolean;
}

/** svc.yaml, loaded: every reference checked, every file read, `${env:}` resolved. */
export interface Desired {
  /** svc.yaml as the user named it (for messages). */
  file: string;
  /** Its folder: relative paths in it, and `.svc/`, are resolved from here. */
  dir: string;
  applications: DesiredApplication[];
  reactors: DesiredReactor[];
  proxies: DesiredProxy[];
  /** svc.yaml first, then every file it names, each once. */
  files: SourceFile[];
  /**
   * Resources held back (loaded with holdBroken): a file they name does not load. They are left as
   * the target has them (never created, changed or pruned) until it does.
   */
  held?: HeldResource[];
  /** Files named but not read (a missing file of a held resource), absolute: a watcher waits for them. */
  unread?: string[];
}

/** A reactor or proxy held back, and why: each problem of its files at path:line:column. */
export interface HeldResource {
  address: Address;
  message: string;
}

/** What the target holds, as its list endpoints return it. */
export interface Actual {
  applications: Application[];
  reactors: Reactor[];
  proxies: Proxy[];
}

/** What svc remembers of one resource it manages: never a key, never a configuration value. */
export interface StateEntry {
  id: string;
  /** contentHash() of the resource as last applied (configuration by key only). */
  hash: string;
}

/** svc's resources on one target (base URL and tenant), by kind and name. */
export type TargetState = Record<Kind, Record<string, StateEntry>>;

export function emptyTargetState(): TargetState {
  return { applications: {}, reactors: {}, proxies: {} };
}

/**
 * `record[name]` when it is the record's own: names are the user's, and `__proto__`, `constructor`
 * or `toString` would otherwise read what every object inherits.
 */
export function ownEntry<T>(record: Record<string, T>, name: string): T | undefined {
  return Object.hasOwn(record, name) ? record[name] : undefined;
}

/** Sets `record[name]` as an own property: assigning `__proto__` would set the prototype (and JSON drop it). */
export function setEntry<T>(record: Record<string, T>, name: string, value: T): void {
  Object.defineProperty(record, name, { value, enumerable: true, writable: true, configurable: true });
}

/** A field as the plan shows it. Configuration values never appear: only which keys changed. */
export type FieldDiff = PlanFieldDiff;

export type Action = PlanAction;

/** A change as shown (api/plan.ts), with what the engine needs to make it. */
export interface Change extends PlanChangeView {
  address: Address;
  kind: Kind;
  name: string;
  /** The resource's id on the target (absent for a create). */
  id?: string;
  /** Addresses of the changes that must be done first. */
  dependsOn: Address[];
}

export interface Plan {
  /** In the order they are shown: Applications, reactors, proxies, then deletions (Applications last). */
  changes: Change[];
  /** Id of every desired resource that exists on the target, by address. */
  ids: Record<Address, string>;
  /** State entries whose resource is gone from the target: dropped when the plan is applied. */
  forgotten: Address[];
  /** Resources the state records that svc.yaml no longer names: `--prune` deletes them. */
  orphans: Address[];
  warnings: string[];
  /** Resources held back (Desired.held): not in `changes`, never pruned. */
  held?: HeldChange[];
}

/** A resource held back, and whether the target has it (it keeps what it has) or not (it is not created). */
export interface HeldChange extends HeldResource {
  kept: boolean;
}

export interface PlanOptions {
  prune?: boolean;
  /** Only these addresses (and the creations they need). */
  targets?: Address[];
  /** The Application whose key svc uses: never deleted, whatever the state says. */
  selfApplicationId?: string;
}

export type Counts = Record<Action, number>;

export function countChanges(plan: Pick<Plan, 'changes'>): Counts {
  const counts: Counts = { create: 0, update: 0, rename: 0, adopt: 0, delete: 0 };
  for (const change of plan.changes) counts[change.action]++;
  return counts;
}
