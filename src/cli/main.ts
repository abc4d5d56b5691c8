import { getEventListeners } from 'node:events';
import { commandsFor, type Entry } from './commands/index.js';
import { createContext, type Context, type GlobalOptions } from './context.js';
import { explainKeyError } from './target/key-errors.js';
import { targetSource } from './target/describe.js';
import { ConnectionError } from '../client/errors.js';
import { withFlagNames } from './io/field-flags.js';
import type { GlobalFlags } from './target/resolve.js';
import type { IO } from './io/process.js';
import { Output } from './io/output.js';
import { Command, CommanderError, register, type RegisteredCommand, type RunHandler } from './registry.js';
import { cliProblem, reportError } from './io/report.js';
import { packageVersion } from '../lib/package-version.js';
import { asCliError } from './io/resource-errors.js';

/** Commander's error codes that mean "the command line was wrong": exit 2. */
const USAGE_CODES = new Set([
  'commander.unknownOption',
  'commander.unknownCommand',
  'commander.missingArgument',
  'commander.optionMissingArgument',
  'commander.missingMandatoryOptionValue',
  'commander.invalidArgument',
  'commander.excessArguments',
  'commander.conflictingOption',
]);

type Entries = Entry[];

/** A first session, in the root help. */
const ROOT_EXAMPLES = [
  'svc serve                                   # the local emulator; keys in .svc/credentials.json',
  'svc applications list                       # from another shell, in the same folder',
  'svc reactors create --name charge --code reactors/charge.js',
  `svc invoke reactor charge --args '{"amount":42}'`,
  'svc tokens list --json | jq .data',
  'svc <command> --help                        # the flags of a command',
];

/**
 * The commander program of svc with `entries` registered; `run` is what a command's action does.
 * `svc completion` builds one too, with every command, to read the command tree.
 */
export function createProgram(io: IO, argv: string[], run: RunHandler, entries: Entries): Command {
  const program = new Command('svc')
    .description('CLI and local emulator for the tokenization platform')
    .version(packageVersion(), '-v, --version', 'print the svc version')
    .option('--base-url <url>', 'API base URL (env SVC_BASE_URL; default: the local emulator)')
    .option('--management-key <key>', 'management Application key (env SVC_MANAGEMENT_KEY)')
    .option('--api-key <key>', 'API key for token and invoke commands (env SVC_API_KEY)')
    .option('--profile <name>', 'use a saved profile (env SVC_PROFILE)')
    .option('--json', 'print the result as one JSON document')
    .option('--no-color', 'no colours or terminal formatting')
    .option('--debug', 'show stack traces of unexpected errors')
    // Every command's help lists these too: they work after any command (`svc reactors list --json`).
    .configureHelp({ showGlobalOptions: true })
    .addHelpText('after', `\nExamples:\n${ROOT_EXAMPLES.map((line) => `  $ ${line}`).join('\n')}`)
    .showSuggestionAfterError()
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      // Help written as an error (a group without its verb): with --json, one JSON error instead of prose.
      writeErr: (text) =>
        io.stderr.write(
          argv.includes('--json')
            ? `${JSON.stringify({ error: cliProblem(`a command is missing: ${/^Usage: (.*?) \[options\]/.exec(text)?.[1] ?? 'svc'} --help lists them`, 2, true) })}\n`
            : text,
        ),
      // Usage errors read like every other error, and are JSON with --json (parsed or not yet).
      // Written straight to stderr: commander's `write` here is writeErr, which words help as an error.
      outputError: (text) => {
        const message = text
          .trim()
          .replace(/^error: /, '')
          .replace(/\n/g, ' ');
        io.stderr.write(
          argv.includes('--json')
            ? `${JSON.stringify({ error: cliProblem(message, 2, true) })}\n`
            : `Error: ${message[0]?.toUpperCase()}${message.slice(1)}\n`,
        );
      },
    });
  register(program, entries, run);
  return program;
}

/**
 * Runs one svc command line in-process and resolves to its exit code: 0, or what the handler returned
 * (`svc apply --detailed-exitcode` says "changes pending" with 2), or the error's. `entries` are the
 * commands to offer: unless a test gives its own, those the command line needs (commands/index.ts).
 */
export async function runSvc(argv: string[], io: IO, given?: Entries): Promise<number> {
  const entries = given ?? (await commandsFor(argv));
  let globals: GlobalOptions = { json: false, color: true, debug: false };
  let exitCode = 0;
  let context: Context | undefined;
  let ran: RegisteredCommand | undefined;
  const program: Command = createProgram(
    io,
    argv,
    async (definition, input) => {
      const raw = program.opts<GlobalFlags & Partial<GlobalOptions>>();
      // --json and --debug have no default (help would show "default: false"): absent is false.
      const color = raw.color !== false && io.env.NO_COLOR === undefined;
      globals = { ...raw, json: raw.json === true, debug: raw.debug === true, color };
      const output = new Output(io, { json: globals.json, color: globals.color });
      context = createContext(io, output, globals);
      ran = definition;
      exitCode = (await definition.handler(input, context)) ?? 0;
    },
    entries,
  );

  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return 0;
      // `svc help X` exits 0; a group without a verb (help on stderr) and wrong usage exit 2.
      if (error.code === 'commander.help') return error.exitCode === 0 ? 0 : 2;
      return USAGE_CODES.has(error.code) ? 2 : error.exitCode;
    }
    const target = async () => context?.target().catch(() => undefined);
    const explained = asCliError(await explainKeyError(error, target));
    // --json keeps the server's problem as it came; people read the flags they typed.
    const worded = globals.json ? explained : withFlagNames(explained, ran?.options);
    // A target that cannot be reached is checked where its URL came from (a profile, SVC_BASE_URL, --base-url).
    const reached = error instanceof ConnectionError ? await target() : undefined;
    return reportError(worded, io, {
      json: globals.json,
      debug: globals.debug || argv.includes('--debug'),
      exitCode: ran?.errorExitCode,
      source: reached && targetSource(reached, io.cwd),
    });
  }
}

/** The process entry (bin/svc.js). SIGINT/SIGTERM stop a command that listens for them, else exit. */
export async function main(): Promise<void> {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    const graceful = getEventListeners(controller.signal, 'abort').length > 0;
    if (controller.signal.aborted || !graceful) process.exit(signal === 'SIGINT' ? 130 : 143);
    controller.abort(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // A reader that stops early (`svc ... --help | head -1`) closes the pipe: stop quietly, as Unix tools do,
  // instead of an unhandled EPIPE with a stack trace.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    });
  }
  const code = await runSvc(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    cwd: process.cwd(),
    signal: controller.signal,
  });
  process.exitCode = code;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
}
