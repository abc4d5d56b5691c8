/**
 * What goes wrong while building a resource from input, told apart so that each caller words it its own
 * way: the CLI makes an InvalidInputError a usage error (exit 2) and adds the command that lists names
 * to a NameLookupError; `svc apply` points at the line of svc.yaml. No message here names a CLI flag
 * unless the caller passed it in as the input's label.
 */
import type { ApiError } from '../client/errors.js';

/** The input is malformed: a pair without `=`, rules that are not JSON. */
export class InvalidInputError extends Error {
  override readonly name = 'InvalidInputError';
}

/** A file the input names cannot be read (missing, a directory, no permission). */
export class UnreadableFileError extends Error {
  override readonly name = 'UnreadableFileError';
  /** Why, in words, without the file's name: `no such file`, `it is a FIFO (named pipe), not a regular file`. */
  readonly reason: string;
  constructor(
    readonly file: string,
    /** What the file was meant to hold, as messages say it: `code`, `configuration`. */
    readonly role: string,
    cause: unknown,
  ) {
    super(`Cannot read the ${role} file ${file}: ${reasonOf(cause)}.`, { cause });
    this.reason = reasonOf(cause);
  }
}

/**
 * A file named in svc.yaml that lies outside its folder once symlinks are resolved (`real`): read
 * only when the caller allows it. The caller words how to allow it (a flag).
 */
export class OutsideFolderError extends UnreadableFileError {
  constructor(
    file: string,
    role: string,
    readonly folder: string,
    readonly real: string,
  ) {
    const resolved = real === file ? '' : ` (it resolves to ${real})`;
    super(file, role, new Error(`it is outside ${folder}${resolved}`));
  }
}

/** The resources a name-based reference can point at. */
export type ResourceNoun = 'Application' | 'reactor' | 'proxy';

export const PLURAL: Record<ResourceNoun, string> = {
  Application: 'Applications',
  reactor: 'reactors',
  proxy: 'proxies',
};

/** A name matched no resource (`ids` empty) or several (`ids` lists them). */
export class NameLookupError extends Error {
  override readonly name = 'NameLookupError';
  constructor(
    readonly noun: ResourceNoun,
    readonly lookedUp: string,
    readonly ids: readonly string[],
  ) {
    super(
      ids.length === 0
        ? `No ${noun} named "${lookedUp}".`
        : `${ids.length} ${PLURAL[noun]} are named "${lookedUp}"; use an id: ${ids.join(', ')}.`,
    );
  }
}

/** The key in use may not list the resources a name is looked up in (403): `cause` is the server's refusal. */
export class NameLookupDeniedError extends Error {
  override readonly name = 'NameLookupDeniedError';
  constructor(
    readonly noun: ResourceNoun,
    readonly lookedUp: string,
    override readonly cause: ApiError,
  ) {
    super(`Looking up the ${noun} named "${lookedUp}" was refused: ${cause.message}`, { cause });
  }
}

function reasonOf(error: unknown): string {
  if ((error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return 'no such file';
  return error instanceof Error ? error.message : String(error);
}
