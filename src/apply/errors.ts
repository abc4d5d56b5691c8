/**
 * An expected failure of apply: svc.yaml does not load, a plan cannot be made, a plan file is stale.
 * The message is for the user as it is (it names file:line and the path where it can); `issues`
 * holds every problem found when there is more than one. The CLI reports it as a UserError.
 */
export class ApplyError extends Error {
  override readonly name = 'ApplyError';
  readonly issues: string[];
  /** 1 for a failure, 2 for a command line that cannot be acted on (a missing --yes). */
  readonly exitCode: 1 | 2;
  /** For a config that does not load: every file it names (absolute), read or not, so a watcher can wait for them. */
  readonly files: string[] | undefined;

  constructor(message: string, options: { issues?: string[]; exitCode?: 1 | 2; files?: string[] } = {}) {
    super(message);
    this.issues = options.issues ?? [message];
    this.exitCode = options.exitCode ?? 1;
    this.files = options.files;
  }

  /** One error for many problems: the first one, and how many more there are. */
  static of(issues: string[], options: { files?: string[] } = {}): ApplyError {
    const more = issues.length - 1;
    const first = issues[0] ?? 'unknown problem';
    const message = more > 0 ? `${first} (and ${more} more problem${more === 1 ? '' : 's'})` : first;
    return new ApplyError(message, { issues, ...options });
  }
}
