/**
 * Access-rule evaluation (pure). An Application reaches a token through its access rules, taken in
 * ascending priority: the first rule whose container is a prefix of the token's container decides,
 * granting the permission with the rule's transform or refusing it. When no rule covers the
 * container, the plain permissions apply everywhere with the implicit transform: `mask` to read,
 * `reveal` to use. Otherwise access is denied.
 */
import type { RuleTransform } from '../../api/permissions.js';
import type { Explanation, ExplainedRule } from '../../api/explanation.js';
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

/** An Application as an explanation names it. */
export interface NamedGrantee extends Grantee {
  id: string;
  name: string;
  type: string;
}

/**
 * Why `evaluateTokenAccess` (or, without containers, `holdsAnywhere`) decided as it did: every rule
 * in priority order with each criterion, the rule or plain permissions that decided, or the nearest
 * miss. Computed again, apart from the fast path, only when a refusal is answered or asked for.
 */
export function explainAccess(
  grantee: NamedGrantee,
  permission: string,
  containers?: readonly string[],
  token?: string,
): Explanation {
  const sorted = byPriority(grantee.rules);
  const covers = (rule: AccessRule) =>
    rule.container !== undefined && containers?.some((c) => c.startsWith(rule.container!)) === true;
  const rules: ExplainedRule[] = sorted.map((rule, index) => ({
    index,
    priority: rule.priority,
    ...(rule.description !== undefined && { description: rule.description }),
    ...(rule.container !== undefined && { container: rule.container }),
    ...(rule.conditions !== undefined && { conditions: rule.conditions }),
    permissions: [...rule.permissions],
    transform: rule.transform,
    criteria: {
      container: containers === undefined || rule.container === undefined ? null : covers(rule),
      // Conditions scope session rules; an Application's rules have none (grants.ts refuses them).
      conditions: rule.conditions === undefined ? null : false,
      permission: rule.permissions.includes(permission),
    },
    matched: containers === undefined ? rule.permissions.includes(permission) : covers(rule),
  }));
  const held_plainly = grantee.permissions.includes(permission);
  const held_by_rules = rules.filter((rule) => rule.criteria.permission).map((rule) => rule.index);
  const base: Explanation = {
    decision: 'denied',
    reason: '',
    application: { id: grantee.id, name: grantee.name, type: grantee.type },
    operation: permission,
    permission: { name: permission, held_plainly, held_by_rules },
    ...(token !== undefined && containers !== undefined && { token: { id: token, containers: [...containers] } }),
    rules,
  };
  if (containers === undefined) return explainAnywhere(base, held_plainly, held_by_rules);
  const decision = evaluateTokenAccess(grantee, permission, containers);
  const where = containers.join(', ');
  const decidingRule = decision.rule ?? firstCovering(sorted, containers);
  const index = decidingRule === undefined ? -1 : sorted.indexOf(decidingRule);
  if (index >= 0) {
    const rule = rules[index]!;
    const named = `rule ${index} (priority ${rule.priority}, container ${rule.container})`;
    return decision.allowed
      ? {
          ...base,
          decision: 'granted',
          decided_by: { rule: index },
          transform: decision.transform,
          reason: `${named} grants ${permission} with transform ${decision.transform}`,
        }
      : {
          ...base,
          decided_by: { rule: index },
          nearest_miss: { rule: index, failed: 'permission' },
          reason: `${named} covers ${where} first and does not grant ${permission}`,
        };
  }
  if (decision.allowed) {
    return {
      ...base,
      decision: 'granted',
      decided_by: { plain_permissions: true },
      transform: decision.transform,
      reason: `no rule covers ${where}; the plain permission ${permission} applies (transform ${decision.transform})`,
    };
  }
  const nearest = rules.find((rule) => rule.criteria.permission) ?? rules[0];
  return {
    ...base,
    decided_by: null,
    ...(nearest && { nearest_miss: { rule: nearest.index, failed: 'container' as const } }),
    reason: `no rule covers ${where} and ${permission} is not among the plain permissions${
      nearest ? `; nearest: rule ${nearest.index} (container ${nearest.container ?? 'none'})` : ''
    }`,
  };
}

function firstCovering(sorted: readonly AccessRule[], containers: readonly string[]): AccessRule | undefined {
  for (const container of containers) {
    const rule = sorted.find((r) => r.container !== undefined && container.startsWith(r.container));
    if (rule) return rule;
  }
  return undefined;
}

/** A permission needed anywhere at all (listing, tokenizing, a route's permission). */
function explainAnywhere(base: Explanation, plainly: boolean, byRules: number[]): Explanation {
  const permission = base.operation!;
  if (plainly)
    return {
      ...base,
      decision: 'granted',
      decided_by: { plain_permissions: true },
      reason: `${permission} is among the plain permissions`,
    };
  if (byRules.length > 0)
    return {
      ...base,
      decision: 'granted',
      decided_by: { rule: byRules[0]! },
      reason: `rule ${byRules[0]} grants ${permission}`,
    };
  const first = base.rules?.[0];
  return {
    ...base,
    decided_by: null,
    ...(first && { nearest_miss: { rule: first.index, failed: 'permission' as const } }),
    reason: `the ${base.application?.type} Application holds ${permission} neither plainly nor in any access rule`,
  };
}
