/**
 * A server's field errors in the words of the command line that caused them: a user who typed
 * `--name` reads `--name: …`, not the API's `name`, and `rules[0].priority` reads `--rule (rules[0].priority)`.
 */
import { ApiError } from '../../client/errors.js';
import type { OptionSpec } from '../option-types.js';

/** `error` with the field names of its problem turned into the command's flags, where one matches. */
export function withFlagNames(error: unknown, options: readonly OptionSpec[] | undefined): unknown {
  const fields = error instanceof ApiError ? error.problem.errors : undefined;
  if (!(error instanceof ApiError) || !fields || !options?.length) return error;
  const flags = options.flatMap((spec) => /--([a-z0-9-]+)/.exec(spec.flags)?.[1] ?? []);
  const renamed: Record<string, string[]> = {};
  for (const [field, messages] of Object.entries(fields)) {
    const top = /^[^.[]+/.exec(field)?.[0] ?? field;
    const flag = flagOf(top, flags);
    const label = flag === undefined ? field : field === top ? `--${flag}` : `--${flag} (${field})`;
    renamed[label] = [...(renamed[label] ?? []), ...messages];
  }
  const context = { ...(error.key && { key: error.key }), ...(error.note && { note: error.note }) };
  return new ApiError(error.status, { ...error.problem, errors: renamed }, context);
}

/** `timeout_ms` -> `timeout-ms`; a list (`rules`) by its repeatable flag (`rule`); `application_id` -> `application`. */
function flagOf(field: string, flags: string[]): string | undefined {
  const kebab = field.replaceAll('_', '-');
  return [kebab, kebab.replace(/s$/, ''), kebab.replace(/-id$/, '')].find((name) => flags.includes(name));
}
