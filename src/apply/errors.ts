/** How many problems an error's message lists; the rest are counted (all are in `issues`). */
export const SHOWN_ISSUES = 50;

/**
 * An expected failure of apply: svc.yaml does not load, a plan cannot be made, a plan file is stale.
 * The message is for the user as it is (it names file:line:column and the path where it can); with
 * more than one problem it lists them, a line each (the first SHOWN_ISSUES, then how many more), and
 * `issues` holds every one. The CLI reports it as a UserError.
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

  /**
   * One error for many problems: the one, or "svc.yaml has 3 problems:" and each on a line of its own
   * (`of` names what has them: svc.yaml, the plan).
   */
  static of(issues: string[], options: { files?: string[]; of?: string } = {}): ApplyError {
    const { of = 'It', files } = options;
    if (issues.length <= 1) return new ApplyError(issues[0] ?? 'unknown problem', { issues, ...(files && { files }) });
    const more = issues.length - SHOWN_ISSUES;
    const lines = [
      `${of} has ${issues.length} problems:`,
      ...issues.slice(0, SHOWN_ISSUES),
      ...(more > 0 ? [`… and ${more} more`] : []),
    ];
    return new ApplyError(lines.join('\n'), { issues, ...(files && { files }) });
  }
}
