import { Command, CommanderError, Option } from 'commander';
import type { Context } from './context.js';
import type { ArgSpec, ArgsOf, OptionSpec, OptionsOf } from './option-types.js';

export type { ArgSpec, OptionSpec } from './option-types.js';

export interface CommandInput<O, A> {
  args: A;
  options: O;
}

/**
 * A command as plain data (STYLE.md 1): what it takes, and a handler that gets a context. The handler's
 * `options` and `args` are typed from `options` and `args` (see option-types.ts). It resolves to
 * nothing (exit 0) or to the exit code of a success that says more (2: changes pending).
 */
export interface CommandDefinition<
  O extends readonly OptionSpec[] = readonly [],
  A extends readonly ArgSpec[] = readonly [],
> {
  name: string;
  description: string;
  aliases?: string[];
  args?: A;
  options?: O;
  /** Lines shown after the option list in --help (what the options do not say: env variables, files). */
  notes?: string[];
  /** Shown after the option list (and the notes) in --help. */
  examples?: string[];
  /** The exit code of an error, where the command's own codes give 1 a meaning (`svc replay`: 1 differs). */
  errorExitCode?: number;
  handler(input: CommandInput<OptionsOf<O>, ArgsOf<A>>, ctx: Context): Promise<void | number>;
}

/** The input as the registry builds it, before a definition's specs type it. */
export type RawInput = CommandInput<Record<string, unknown>, Record<string, string | string[] | undefined>>;

/** A definition as the registry holds it: the handler's input built from the specs, its types erased. */
export interface RegisteredCommand
  extends Omit<CommandDefinition<readonly OptionSpec[], readonly ArgSpec[]>, 'handler'> {
  handler(input: RawInput, ctx: Context): Promise<void | number>;
}

/** A noun grouping its verbs: `svc applications list`. */
export interface CommandGroup {
  name: string;
  description: string;
  aliases?: string[];
  commands: RegisteredCommand[];
}

/** Types a command's handler from its own specs (declared inline, or `as const` elsewhere). */
export function defineCommand<
  const O extends readonly OptionSpec[] = readonly [],
  const A extends readonly ArgSpec[] = readonly [],
>(definition: CommandDefinition<O, A>): RegisteredCommand {
  // Sound: register() builds `args` and `options` from these same specs, as OptionsOf and ArgsOf say.
  return definition as unknown as RegisteredCommand;
}

export type RunHandler = (definition: RegisteredCommand, input: RawInput, command: Command) => Promise<void>;

/** Maps the definitions onto commander; the only module that knows commander. */
export function register(parent: Command, entries: (RegisteredCommand | CommandGroup)[], run: RunHandler): void {
  for (const entry of entries) {
    if ('commands' in entry) {
      const group = parent.command(entry.name).description(entry.description);
      group.aliases(entry.aliases ?? []);
      register(group, entry.commands, run);
      continue;
    }
    const command = parent.command(entry.name).description(entry.description);
    command.aliases(entry.aliases ?? []);
    for (const arg of entry.args ?? []) {
      if (arg.rest) command.argument(`[${arg.name}...]`, arg.description).allowUnknownOption();
      else command.argument(arg.optional ? `[${arg.name}]` : `<${arg.name}>`, arg.description);
    }
    for (const spec of entry.options ?? []) command.addOption(toOption(spec));
    if (entry.notes?.length) command.addHelpText('after', `\n${entry.notes.join('\n')}`);
    if (entry.examples?.length) {
      command.addHelpText('after', `\nExamples:\n${entry.examples.map((line) => `  $ ${line}`).join('\n')}`);
    }
    command.action(async (...received: unknown[]) => {
      const specs = entry.args ?? [];
      const args = Object.fromEntries(
        specs.map((arg, i) => [
          arg.name,
          arg.rest ? restOf(command, received[i] as string[]) : (received[i] as string),
        ]),
      );
      await run(entry, { args, options: command.opts() }, command);
    });
  }
}

/**
 * A rest argument's words: those after the command line's first `--`, when they are all the words
 * commander left over (commander drops the `--` itself, so the raw command line tells).
 */
function restOf(command: Command, words: string[]): string[] | undefined {
  let root = command;
  while (root.parent) root = root.parent;
  // The command line as parse() got it: commander keeps it on the program, untyped.
  const raw: string[] = (root as Command & { rawArgs?: string[] }).rawArgs ?? [];
  const at = raw.indexOf('--');
  if (at < 0) return undefined;
  const after = raw.slice(at + 1);
  return after.length === words.length && after.every((word, i) => word === words[i]) ? after : undefined;
}

function toOption(spec: OptionSpec): Option {
  const option = new Option(spec.flags, spec.description);
  if (spec.choices) option.choices(spec.choices);
  if (spec.repeatable)
    option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
  if (spec.required) option.makeOptionMandatory();
  if (spec.default !== undefined) option.default(spec.default);
  return option;
}

export { Command, CommanderError };
