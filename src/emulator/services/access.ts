/**
 * Access-rule evaluation (pure). An Application reaches a token through its access rules, taken in
 * ascending priority: the first rule whose container is a prefix of the token's container decides,
 * granting the permission with the rule's transform or refusing it. When no rule covers the
 * container, the plain permissions apply everywhere with the implicit transform: `mask` to read,
 * `reveal` to use. Otherwise access is denied.
 */
import type { RuleTransform } from '../../api/permissions.js';
import type { AccessRule } from '../../api/types.js';

export interface Grantee {
  permissions: readonly string[];
  rules: readonly AccessRule[];
}

export type AccessDecision =
  | { allowed: true; transform: RuleTransform; rule?: AccessRule }
  | { allowed: false; rule?: AccessRule };

const IMPLICIT_TRANSFORM: Record<string, RuleTransform> = { 'token:read': 'mask', 'token:use': 'reveal' };

export function evaluateAccess(grantee: Grantee, permission: string, container: string): AccessDecision {
  const rule = byPriority(grantee.rules).find(
    (candidate) => candidate.container !== undefined && container.startsWith(candidate.container),
  );
  if (rule) {
    return rule.permissions.includes(permission)
      ? { allowed: true, transform: rule.transform, rule }
      : { allowed: false, rule };
  }
  if (grantee.permissions.includes(permission)) {
    return { allowed: true, transform: IMPLICIT_TRANSFORM[permission] ?? 'reveal' };
  }
  return { allowed: false };
}

/**
 * Rules sorted by priority, once per rules array (records are replaced, never changed in place):
 * a list or a tokenize checks thousands of tokens against the same rules.
 */
const sortedRules = new WeakMap<readonly AccessRule[], readonly AccessRule[]>();

function byPriority(rules: readonly AccessRule[]): readonly AccessRule[] {
  let sorted = sortedRules.get(rules);
  if (!sorted) {
    sorted = [...rules].sort((a, b) => a.priority - b.priority);
    sortedRules.set(rules, sorted);
  }
  return sorted;
}

/** Containers are absolute, slash-terminated, lower-case paths: `/`, `/pci/`, `/pci/high/`. */
export const CONTAINER_PATTERN = /^\/([a-z0-9_-]+\/)*$/;

export function normalizeContainer(container: string): string {
  return container.toLowerCase();
}

const STRENGTH: Record<RuleTransform, number> = { redact: 0, mask: 1, reveal: 2 };

/**
 * Access to a token held in several containers: granted when any container grants it, with the
 * most revealing transform among those that do.
 */
export function evaluateTokenAccess(
  grantee: Grantee,
  permission: string,
  containers: readonly string[],
): AccessDecision {
  let best: AccessDecision = { allowed: false };
  for (const container of containers) {
    const decision = evaluateAccess(grantee, permission, container);
    if (decision.allowed && (!best.allowed || STRENGTH[decision.transform] > STRENGTH[best.transform])) best = decision;
  }
  return best;
}

/** Whether an Application holds a permission anywhere at all (plainly, or through some rule). */
export function holdsAnywhere(grantee: Grantee, permission: string): boolean {
  return (
    grantee.permissions.includes(permission) || grantee.rules.some((rule) => rule.permissions.includes(permission))
  );
}
