import { MAX_DEPTH, exceedsDepth } from '../../lib/json-depth.js';
import { HttpError } from '../errors.js';
import { isRecord } from '../../lib/is-record.js';

/**
 * JSON Merge Patch (RFC 7386), pure: an object patch merges member by member, `null` deletes a
 * member, and anything that is not an object replaces the target whole. Neither input is changed.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return patch;
  const result: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) delete result[name];
    else define(result, name, applyMergePatch(Object.hasOwn(result, name) ? result[name] : undefined, value));
  }
  return result;
}

/** Sets a member as data, so that a member named `__proto__` stays a member. */
function define(object: Record<string, unknown>, name: string, value: unknown): void {
  Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
}

/** A merge patch must be a JSON object to apply to a resource. */
export function requirePatchObject(patch: unknown, noun: string): Record<string, unknown> {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    throw new HttpError(400, `A merge patch for a ${noun} must be a JSON object.`);
  }
  if (exceedsDepth(patch, MAX_DEPTH))
    throw new HttpError(400, `The merge patch is nested deeper than ${MAX_DEPTH} levels.`);
  return patch as Record<string, unknown>;
}
