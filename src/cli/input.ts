import { UsageError } from './errors.js';

/** A whole-number flag value, or a usage error naming the flag. */
export function intOption(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} must be a whole number, not "${value}".`);
  return Number(value);
}
