import { PROBLEM_TYPES } from '../../api/problem.js';
import { ApiError, ConnectionError, UnexpectedResponseError } from '../../client/errors.js';
import { safeLines } from '../../lib/terminal-text.js';
import { UsageError, UserError } from './errors.js';
import type { IO } from './process.js';

/**
 * The one top-level error handler: one line on stderr (a JSON document with --json), the exit
 * code, and a stack only for bugs, and only with --debug. A message quotes the server, a file or a
 * name: it is made safe for the terminal (lib/terminal-text.ts), any line after its first indented.
 */
export function reportError(
  error: unknown,
  io: IO,
  options: { json: boolean; debug: boolean; exitCode?: number | undefined; source?: string | undefined },
): number {
  const described = describe(error, options.source);
  const { message, problem, bug } = described;
  // A usage error keeps its 2; a command whose 1 means something else (svc replay) gives its own.
  const exitCode = error instanceof UsageError ? described.exitCode : (options.exitCode ?? described.exitCode);
  if (options.json) {
    const usage = error instanceof UsageError;
    io.stderr.write(`${JSON.stringify({ error: problem ?? cliProblem(message, exitCode, usage) })}\n`);
  } else {
    const shown = safeLines(message, '  ');
    io.stderr.write(bug ? `${shown}\n` : `Error: ${shown}\n`);
  }
  if (bug) {
    if (options.debug && error instanceof Error && error.stack) io.stderr.write(`${safeLines(error.stack)}\n`);
    else if (!options.json) io.stderr.write('This is a bug in svc; run again with --debug for the stack trace.\n');
  }
  return exitCode;
}

/** The problem types of the CLI's own errors (a server's problems keep theirs). */
export const CLI_PROBLEM_TYPES = { usage: 'urn:svc:cli:usage-error', error: 'urn:svc:cli:error' } as const;

/**
 * An error of the CLI itself as `--json` prints it, shaped as a server's problem is: `type`, `title`,
 * `detail`, and `exit_code` where a problem has its HTTP `status`.
 */
export function cliProblem(detail: string, exitCode: number, usage: boolean) {
  return usage
    ? { type: CLI_PROBLEM_TYPES.usage, title: 'Usage error', detail, exit_code: exitCode }
    : { type: CLI_PROBLEM_TYPES.error, title: 'Error', detail, exit_code: exitCode };
}

/** What to check of a target off this machine that cannot be reached: where its URL came from (describe.ts). */
function checkWhat(source: string | undefined): string {
  if (source?.startsWith('profile ')) return `the base URL of ${source} (svc profiles list)`;
  return source === 'SVC_BASE_URL' ? source : '--base-url';
}

function describe(
  error: unknown,
  source?: string,
): { message: string; exitCode: number; problem?: unknown; bug?: boolean } {
  if (error instanceof ApiError) {
    const { problem } = error;
    // The emulator names no flag of its own: the way to another tier is the CLI's to say.
    const hint = error.type === PROBLEM_TYPES.tierRequired ? ' Restart it with `svc serve --tier enterprise`.' : '';
    // A failure of the server (a reactor that threw, a bug) is found in its log by the trace id.
    const trace = error.status >= 500 && problem.trace_id ? ` (trace id ${problem.trace_id})` : '';
    // What the CLI adds (where a refused key came from) follows the server's words, and is in the JSON too.
    const note = error.note ? ` ${error.note}` : '';
    // A refusal the emulator explained is kept by its trace id: the command that shows it is named.
    const why =
      error.status === 403 && problem.explanation !== undefined && problem.trace_id
        ? ` \`svc explain ${problem.trace_id}\` shows why.`
        : '';
    const message = `${error.summary}${trace}${hint}${note}${why}`;
    return { message, exitCode: 1, problem: error.note ? { ...problem, note: error.note } : problem };
  }
  if (error instanceof ConnectionError) {
    const local = /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(`${error.url}/`);
    const hint = local
      ? ' Start the emulator with `svc serve`, or pass --base-url.'
      : ` Check ${checkWhat(source)} and your network.`;
    const tls = tlsReason(error.message);
    if (tls === 'wrong version number' && error.url.startsWith('https:')) {
      const plain = `http:${error.url.slice('https:'.length)}`;
      return { message: `${error.url} answered in plain HTTP: use ${plain}.`, exitCode: 1 };
    }
    const reason =
      error.code === 'ECONNREFUSED' ? 'connection refused' : tls === undefined ? error.message : `TLS error: ${tls}`;
    return { message: `Cannot reach ${error.url}: ${reason}.${hint}`, exitCode: 1 };
  }
  if (error instanceof UnexpectedResponseError) {
    return {
      message: `${error.message} Check --base-url (or SVC_BASE_URL, or the profile's base URL): it should be the API's root.`,
      exitCode: 1,
    };
  }
  if (error instanceof UserError) return { message: error.message, exitCode: error.exitCode };
  const message = error instanceof Error ? error.message : String(error);
  return { message: `Unexpected error: ${message}`, exitCode: 1, bug: true };
}

/**
 * The reason of an OpenSSL error (`...:SSL routines:ssl3_get_record:wrong version number:../deps/...`),
 * which is several lines of library internals as Node words it; undefined for any other error.
 */
function tlsReason(message: string): string | undefined {
  return /SSL routines:[^:]*:([^:]+):/.exec(message)?.[1]?.trim();
}
