import { InvalidInputError, NameLookupError, PLURAL, UnreadableFileError } from '../../requests/errors.js';
import { UsageError, UserError } from './errors.js';

/**
 * The CLI's words for what went wrong building a resource (src/requests knows no flags or commands):
 * malformed input is a usage error (exit 2), a name that matched nothing says how to list the names.
 */
export function asCliError(error: unknown): unknown {
  if (error instanceof InvalidInputError) return new UsageError(error.message, { cause: error });
  if (error instanceof NameLookupError && error.ids.length === 0) {
    const list = `svc ${PLURAL[error.noun].toLowerCase()} list`;
    return new UserError(`No ${error.noun} named "${error.lookedUp}"; \`${list}\` shows them.`, { cause: error });
  }
  if (error instanceof NameLookupError || error instanceof UnreadableFileError) {
    return new UserError(error.message, { cause: error });
  }
  return error;
}
