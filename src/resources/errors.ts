/**
 * What goes wrong while building a resource from input, told apart so that each caller words it its own
 * way: the CLI makes an InvalidInputError a usage error (exit 2) and adds the command that lists names
 * to a NameLookupError; `svc apply` points at the line of svc.yaml. No message here names a CLI flag
 * unless the caller passed it in as the input's label.
 */

/** The input is malformed: a pair without `=`, rules that are not JSON. */
export class InvalidInputError extends Error {
  override readonly name = 'InvalidInputError';
}

/** A file the input names cannot be read (missing, a directory, no permission). */
export class UnreadableFileError extends Error {
  override readonly name = 'UnreadableFileError';
  constructor(
    readonly file: string,
    /** What the file was meant to hold, as messages say it: `code`, `configuration`. */
    readonly role: string,
    cause: unknown,
  ) {
    super(`Cannot read the ${role} file ${file}: ${reasonOf(cause)}.`, { cause });
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

function reasonOf(error: unknown): string {
  if ((error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return 'no such file';
  return error instanceof Error ? error.message : String(error);
}
