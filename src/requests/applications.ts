import type { ApplicationType } from '../api/permissions.js';
import type { AccessRule, Application, CreateApplicationBody, UpdateApplicationBody } from '../api/types.js';
import { InvalidInputError } from './errors.js';

/** What a caller wants of an Application; a field left out is not part of the change. */
export interface ApplicationFields {
  name?: string;
  permissions?: string[];
  rules?: AccessRule[];
}

export interface NewApplication extends ApplicationFields {
  name: string;
  type: ApplicationType;
  /** ISO 8601; the Application is deleted then. */
  expiresAt?: string;
}

/** The body of `POST /applications`; no permissions given is none granted. */
export function createApplicationBody(input: NewApplication): CreateApplicationBody {
  return {
    name: input.name,
    type: input.type,
    permissions: input.permissions ?? [],
    ...(input.rules && { rules: input.rules }),
    ...(input.expiresAt !== undefined && { expires_at: input.expiresAt }),
  };
}

/**
 * The body of `PUT /applications/{id}`. The API requires the name, so one not given is the current
 * one; permissions and rules left out are kept by the API itself, and given ones replace all.
 */
export function updateApplicationBody(
  current: Pick<Application, 'name'>,
  changes: ApplicationFields,
): UpdateApplicationBody {
  return {
    name: changes.name ?? current.name,
    ...(changes.permissions && { permissions: changes.permissions }),
    ...(changes.rules && { rules: changes.rules }),
  };
}

const RULE_EXAMPLE = '{"priority":1,"container":"/pci/","transform":"mask","permissions":["token:read"]}';

/**
 * Access rules from JSON texts: each one rule (an object) or several (an array). The shape of each rule
 * is the API's to check; `label` names the input in messages (`--rule`).
 */
export function parseRules(texts: readonly string[], label: string): AccessRule[] {
  return texts.flatMap((text) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new InvalidInputError(`${label} must be JSON, e.g. '${RULE_EXAMPLE}' (${(error as Error).message}).`);
    }
    if (Array.isArray(parsed)) return parsed as AccessRule[];
    if (typeof parsed === 'object' && parsed !== null) return [parsed as AccessRule];
    throw new InvalidInputError(`${label} must be a JSON object (one rule) or an array of rules.`);
  });
}
