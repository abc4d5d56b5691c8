/**
 * Errors about keys, worded with where the key came from: a refused key (401, 403) names its source
 * (flag, environment variable, profile or credentials file) and shows it masked; a name lookup the key
 * may not make says which key to give instead.
 */
import { PROBLEM_TYPES } from '../../api/problem.js';
import { ApiError } from '../../client/errors.js';
import { NameLookupDeniedError, type ResourceNoun } from '../../requests/errors.js';
import { UserError } from '../io/errors.js';
import { describeKey } from './key-source.js';
import type { Target } from './resolve.js';

/** What to pass instead of a name, when the name cannot be looked up. */
const INSTEAD: Record<ResourceNoun, string> = {
  Application: "the Application's id",
  reactor: "the reactor's id",
  proxy: "the proxy's id (`svc invoke proxy` also takes the proxy key)",
};

/**
 * `error` with the source of its key told; any other error as it is. `target` is asked for only then
 * (a refused request means it was resolved already: asking reads no input again).
 */
export async function explainKeyError(error: unknown, target: () => Promise<Target | undefined>): Promise<unknown> {
  if (error instanceof NameLookupDeniedError) {
    const { cause, noun, lookedUp } = error;
    const key = (await target())?.keys.management;
    const sent = key ? `, with ${describeKey(key, 'management')}` : '';
    return new UserError(
      `Cannot look up the ${noun} named "${lookedUp}": ${cause.message.replace(/\.$/, '')} (${cause.status})${sent}. ` +
        `Resolving a name needs the management key (--management-key or SVC_MANAGEMENT_KEY); or pass ${INSTEAD[noun]}.`,
      { cause: error },
    );
  }
  // Only a refusal of the key itself: not, say, a reactor whose own Application was refused.
  const refused =
    error instanceof ApiError &&
    (error.type === PROBLEM_TYPES.unauthenticated || error.type === PROBLEM_TYPES.forbidden);
  if (refused && error.note === undefined && error.key) {
    const key = (await target())?.keys[error.key];
    const note = key && `The key sent was ${describeKey(key, error.key)}.`;
    if (note) return new ApiError(error.status, error.problem, { key: error.key, note });
  }
  return error;
}
