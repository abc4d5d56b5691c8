/**
 * Comparing a resource as svc.yaml wants it with the resource as the target holds it (pure). Both
 * sides are first put in one normal form (what the server normalises, the planner normalises
 * too: no drift noise), then compared field by field. Configuration values are compared but
 * never shown: a diff says which key was added, removed or changed.
 */
import { structuredPatch } from 'diff';
import type { AccessRule } from '../api/types.js';
import type { ApplicationType } from '../api/permissions.js';
import { sha256 } from './sources.js';
import type { FieldDiff, Kind } from './types.js';

export interface ApplicationSpec {
  name: string;
  type: ApplicationType;
  permissions: string[];
  rules: AccessRule[];
}

export interface ReactorSpec {
  name: string;
  code: string;
  configuration: Record<string, string>;
  /** The Application's id (or, for one not created yet, a marker that matches no id). */
  application: string | null;
}

export interface ProxySpec {
  name: string;
  destination_url: string;
  request_transform: string | null;
  response_transform: string | null;
  configuration: Record<string, string>;
  application: string | null;
  require_auth: boolean;
}

export type Spec = ApplicationSpec | ReactorSpec | ProxySpec;

/** Permissions as a set, rules by priority with lower-cased containers, as the server keeps them. */
export function normalizeApplication(spec: ApplicationSpec): ApplicationSpec {
  const rules = spec.rules
    .map((rule) => ({
      ...(rule.description !== undefined && rule.description !== '' && { description: rule.description }),
      priority: rule.priority,
      ...(rule.container !== undefined && { container: rule.container.toLowerCase() }),
      transform: rule.transform,
      permissions: [...new Set(rule.permissions)].sort(),
    }))
    .sort((a, b) => a.priority - b.priority);
  return { name: spec.name, type: spec.type, permissions: [...new Set(spec.permissions)].sort(), rules };
}

/**
 * What svc records of a resource's contents: a SHA-256 over its fields with configuration by key
 * only, so that state never holds anything derived from a configuration value.
 */
export function contentHash(kind: Kind, spec: Spec): string {
  const shown = 'configuration' in spec ? { ...spec, configuration: Object.keys(spec.configuration).sort() } : spec;
  return sha256(`${kind}\n${stableJson(shown)}`);
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stableJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function sameValue(a: unknown, b: unknown): boolean {
  return stableJson(a) === stableJson(b);
}

/** One configuration map against another, by key, values masked. */
export function configurationDiffs(
  before: Record<string, string> | undefined,
  after: Record<string, string>,
): FieldDiff[] {
  const diffs: FieldDiff[] = [];
  const old = before ?? {};
  // Own keys only: `constructor` or `toString` is a key like any other, not what every object inherits.
  for (const key of Object.keys(after).sort()) {
    if (!Object.hasOwn(old, key)) diffs.push({ field: `configuration.${key}`, type: 'secret', change: 'added' });
    else if (old[key] !== after[key]) diffs.push({ field: `configuration.${key}`, type: 'secret', change: 'changed' });
  }
  for (const key of Object.keys(old).sort()) {
    if (!Object.hasOwn(after, key)) diffs.push({ field: `configuration.${key}`, type: 'secret', change: 'removed' });
  }
  return diffs;
}

/** How many lines of a code diff a plan shows; the rest is counted. */
const MAX_DIFF_LINES = 40;

/** A code field: added, removed, or changed with a short unified diff (3 lines of context). */
export function codeDiff(
  field: string,
  path: string | undefined,
  before: string | null | undefined,
  after: string | null,
): FieldDiff | undefined {
  const old = before ?? null;
  if (old === after) return undefined;
  const where = path === undefined ? {} : { path };
  if (after === null) return { field, type: 'code', change: 'removed' };
  if (old === null) return { field, type: 'code', change: 'added', ...where, lines: lineCount(after) };
  const patch = structuredPatch(field, field, old, after, '', '', { context: 3 });
  const lines: string[] = [];
  for (const hunk of patch.hunks) {
    lines.push(`@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`);
    lines.push(...hunk.lines.filter((line) => !line.startsWith('\\')));
  }
  const more = lines.length - MAX_DIFF_LINES;
  const shown = more > 0 ? [...lines.slice(0, MAX_DIFF_LINES), `… ${more} more diff lines`] : lines;
  return { field, type: 'code', change: 'changed', ...where, diff: shown.join('\n') };
}

function lineCount(code: string): number {
  return code.replace(/\n$/, '').split('\n').length;
}

/** Non-secret fields that differ, as value diffs (`before` absent for a create). */
export function valueDiffs<T extends object>(
  before: T | undefined,
  after: T,
  fields: (keyof T & string)[],
  show: (field: keyof T & string, value: unknown) => unknown = (_, value) => value,
): FieldDiff[] {
  const diffs: FieldDiff[] = [];
  for (const field of fields) {
    const next = after[field];
    if (before === undefined) {
      diffs.push({ field, type: 'value', after: show(field, next) });
    } else if (!sameValue(before[field], next)) {
      diffs.push({ field, type: 'value', before: show(field, before[field]), after: show(field, next) });
    }
  }
  return diffs;
}
