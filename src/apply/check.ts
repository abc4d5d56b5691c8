/**
 * The rules of svc.yaml that span fields, which a JSON Schema cannot say well: the permissions an
 * Application's type allows, references between resources, renames. Pure: each problem is
 * returned with its path, and the loader adds the line.
 */
import { PERMISSIONS_BY_TYPE, RULE_TYPES } from '../api/permissions.js';
import { isRecord } from '../lib/is-record.js';
import { closest, type YamlPath } from './locate.js';
import type { RawConfig } from './raw.js';
import { KINDS } from './types.js';

export interface CheckIssue {
  path: YamlPath;
  /** The problem is the key at `path` (a name), not its value. */
  atKey?: boolean;
  message: string;
}

/**
 * The problems of a config whose shape the schema passed. `unchecked` names Applications left out of
 * it (their shape was refused): a reference to one is not said to name nothing.
 */
export function checkConfig(config: RawConfig, unchecked: ReadonlySet<string> = new Set()): CheckIssue[] {
  const issues: CheckIssue[] = [];
  checkApplications(config, issues);
  checkReferences(config, issues, unchecked);
  checkRenames(config, issues);
  return issues;
}

/**
 * What of a config the schema refused can still be checked, so that its other problems are said with
 * the schema's: the resources the schema found nothing wrong with (a section refused as a whole goes
 * with its resources), and the Applications left out. Undefined when nothing can be (not a map).
 */
export function checkablePart(
  config: unknown,
  refused: readonly YamlPath[],
): { config: RawConfig; unchecked: Set<string> } | undefined {
  if (!isRecord(config) || refused.some((path) => path.length === 0)) return undefined;
  const part: Record<string, Record<string, unknown>> = {};
  const unchecked = new Set<string>();
  for (const kind of KINDS) {
    const section = config[kind];
    const refusedHere = refused.filter((path) => path[0] === kind);
    if (section === undefined) continue;
    const whole = !isRecord(section) || refusedHere.some((path) => path.length < 2);
    const names = isRecord(section) ? Object.keys(section) : [];
    const out = names.filter((name) => whole || refusedHere.some((path) => path[1] === name));
    if (kind === 'applications') for (const name of out) unchecked.add(name);
    if (whole) continue;
    part[kind] = Object.fromEntries(Object.entries(section).filter(([name]) => !out.includes(name)));
  }
  return { config: part as RawConfig, unchecked };
}

function checkApplications(config: RawConfig, issues: CheckIssue[]): void {
  for (const [name, app] of Object.entries(config.applications ?? {})) {
    const at = ['applications', name];
    const allowed = PERMISSIONS_BY_TYPE[app.type];
    const checkPermission = (path: YamlPath, permission: string) => {
      if (!allowed.includes(permission)) {
        const message = `"${permission}" is not allowed for a ${app.type} Application (allowed: ${allowed.join(', ')})`;
        issues.push({ path, message });
      }
    };
    for (const [i, permission] of (app.permissions ?? []).entries())
      checkPermission([...at, 'permissions', i], permission);
    const rules = app.rules ?? [];
    if ((app.permissions ?? []).length === 0 && rules.length === 0) {
      issues.push({ path: at, atKey: true, message: 'give it permissions or rules (at least one of them non-empty)' });
    }
    if (rules.length > 0 && !RULE_TYPES.includes(app.type)) {
      const message = `access rules are only for private and public Applications, not ${app.type}`;
      issues.push({ path: [...at, 'rules'], message });
      continue;
    }
    const priorities = new Map<number, number>();
    rules.forEach((rule, i) => {
      for (const [j, permission] of rule.permissions.entries())
        checkPermission([...at, 'rules', i, 'permissions', j], permission);
      const other = priorities.get(rule.priority);
      if (other !== undefined) {
        const message = `${rule.priority} is already the priority of rules[${other}]`;
        issues.push({ path: [...at, 'rules', i, 'priority'], message });
      }
      priorities.set(rule.priority, i);
    });
  }
}

/** `application: <name>` must name a private or public Application of the same file. */
function checkReferences(config: RawConfig, issues: CheckIssue[], unchecked: ReadonlySet<string>): void {
  const applications = config.applications ?? {};
  for (const kind of ['reactors', 'proxies'] as const) {
    for (const [name, resource] of Object.entries(config[kind] ?? {})) {
      const ref = resource.application;
      if (ref === undefined || unchecked.has(ref)) continue;
      const path = [kind, name, 'application'];
      const target = applications[ref];
      if (!target) {
        const names = [...Object.keys(applications), ...unchecked];
        const suggestion = closest(ref, names);
        const none = names.length === 0;
        const hint = suggestion ? ` (did you mean ${suggestion}?)` : none ? ' (this file has no applications)' : '';
        issues.push({ path, message: `no Application "${ref}"${hint}` });
      } else if (!RULE_TYPES.includes(target.type)) {
        issues.push({
          path,
          message: `"${ref}" is a ${target.type} Application; ${kind} take a private or public one`,
        });
      }
    }
  }
}

/** A `renamed_from` names an old name: not a name in use in the file, and not claimed twice. */
function checkRenames(config: RawConfig, issues: CheckIssue[]): void {
  for (const kind of KINDS) {
    const resources: Record<string, { renamed_from?: string }> = config[kind] ?? {};
    const claimed = new Map<string, string>();
    for (const [name, resource] of Object.entries(resources)) {
      const from = resource.renamed_from;
      if (from === undefined) continue;
      const path = [kind, name, 'renamed_from'];
      if (from === name) issues.push({ path, message: 'is the same as the name; remove it' });
      else if (from in resources) {
        issues.push({ path, message: `"${from}" is still in ${kind}; a rename takes the old name out of the file` });
      } else if (claimed.has(from))
        issues.push({ path, message: `"${from}" is already renamed to ${claimed.get(from)}` });
      claimed.set(from, name);
    }
  }
}
