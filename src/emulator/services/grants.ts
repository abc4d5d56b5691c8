/** Checks the permissions and access rules an Application may hold, given its type (pure). */
import { ALL_PERMISSIONS, PERMISSIONS_BY_TYPE, RULE_TYPES, type ApplicationType } from '../../api/permissions.js';
import type { AccessRule } from '../../api/types.js';
import { FieldErrors } from '../errors.js';
import { CONTAINER_PATTERN, normalizeContainer } from './access.js';

export interface Grants {
  permissions: string[];
  rules: AccessRule[];
}

/**
 * Validates grants for an Application type and returns them normalised (containers lower-cased,
 * duplicate permissions dropped). Throws a 400 listing every problem found.
 */
export function checkGrants(type: ApplicationType, grants: Grants): Grants {
  const errors = new FieldErrors();
  const allowed = PERMISSIONS_BY_TYPE[type];
  const checkPermission = (field: string, permission: string) => {
    if (!ALL_PERMISSIONS.includes(permission)) {
      errors.add(field, `"${permission}" is not a known permission (known: ${ALL_PERMISSIONS.join(', ')})`);
    } else if (!allowed.includes(permission)) {
      errors.add(field, `"${permission}" is not allowed for a ${type} Application (allowed: ${allowed.join(', ')})`);
    }
  };

  for (const [i, permission] of grants.permissions.entries()) checkPermission(`permissions[${i}]`, permission);
  if (grants.permissions.length === 0 && grants.rules.length === 0) {
    errors.add('permissions', 'at least one of permissions or rules must be non-empty');
  }
  if (grants.rules.length > 0 && !RULE_TYPES.includes(type)) {
    errors.add('rules', `access rules are only for private and public Applications, not ${type}`);
  }

  const priorities = new Map<number, number>();
  const rules = grants.rules.map((rule, i) => {
    const at = `rules[${i}]`;
    if (rule.container !== undefined && rule.conditions !== undefined) {
      errors.add(`${at}.conditions`, 'container and conditions are mutually exclusive');
    } else if (rule.conditions !== undefined) {
      errors.add(`${at}.conditions`, 'conditions apply only to sessions; scope an Application rule with container');
    }
    if (rule.container === undefined) {
      if (RULE_TYPES.includes(type)) errors.add(`${at}.container`, `is required for ${type} Applications`);
    } else if (!CONTAINER_PATTERN.test(normalizeContainer(rule.container))) {
      errors.add(
        `${at}.container`,
        'must start and end with "/" and hold only letters, digits, "-" and "_" between slashes (e.g. /pci/high/)',
      );
    }
    for (const [j, permission] of rule.permissions.entries()) checkPermission(`${at}.permissions[${j}]`, permission);
    const seen = priorities.get(rule.priority);
    if (seen !== undefined) errors.add(`${at}.priority`, `${rule.priority} is already used by rules[${seen}]`);
    priorities.set(rule.priority, i);
    return {
      ...rule,
      ...(rule.container !== undefined && { container: normalizeContainer(rule.container) }),
      permissions: [...new Set(rule.permissions)],
    };
  });

  errors.throwIfAny();
  return { permissions: [...new Set(grants.permissions)], rules };
}
