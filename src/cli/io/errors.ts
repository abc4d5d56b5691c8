/**
 * The CLI's error taxonomy (STYLE.md 5). A UserError is expected: its message is printed as one
 * line, exit 1, no stack. A UsageError is a mistake in the command line: exit 2. An ApiError
 * (src/client) carries the server's problem. Anything else is a bug: stack only with --debug.
 */
export class UserError extends Error {
  override readonly name: string = 'UserError';
  readonly exitCode: number = 1;
}

export class UsageError extends UserError {
  override readonly name = 'UsageError';
  override readonly exitCode = 2;
}
