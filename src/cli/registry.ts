import { Command, CommanderError, Option } from 'commander';
import type { Context } from './context.js';

export interface OptionSpec {
  /** Commander flags, e.g. `--name <name>` or `-X, --method <method>`. */
  flags: string;
  description: string;
  choices?: readonly string[];
  /** Collect every occurrence into an array. */
  repeatable?: boolean;
  required?: boolean;
  default?: string | boolean;
}

export interface ArgSpec {
  name: string;
  description: string;
  optional?: boolean;
}

export interface CommandInput<O> {
  args: Record<string, string | undefined>;
  options: O;
}

/** A command as plain data (STYLE.md 1): what it takes, and a handler that gets a context. */
export interface CommandDefinition<O = Record<string, unknown>> {
  name: string;
  description: string;
  aliases?: string[];
  args?: ArgSpec[];
  options?: OptionSpec[];
  /** Shown after the option list in --help. */
  examples?: string[];
  /** Resolves to nothing (exit 0) or to the exit code of a success that says more (2: changes pending). */
  handler(input: CommandInput<O>, ctx: Context): Promise<void | number>;
}

/** A noun grouping its verbs: `svc applications list`. */
export interface CommandGroup {
  name: string;
  description: string;
  aliases?: string[];
  commands: CommandDefinition<never>[];
}

export function defineCommand<O>(definition: CommandDefinition<O>): CommandDefinition<never> {
  return definition as unknown as CommandDefinition<never>;
}

export type RunHandler = (definition: CommandDefinition<never>, input: CommandInput<never>, command: Command) => Promise<void>;

/** Maps the definitions onto commander; the only module that knows commander. */
export function register(parent: Command, entries: (CommandDefinition<never> | CommandGroup)[], run: RunHandler): void {
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
      command.argument(arg.optional ? `[${arg.name}]` : `<${arg.name}>`, arg.description);
    }
    for (const spec of entry.options ?? []) command.addOption(toOption(spec));
    if (entry.examples?.length) {
      command.addHelpText('after', `\nExamples:\n${entry.examples.map((line) => `  $ ${line}`).join('\n')}`);
    }
    command.action(async (...received: unknown[]) => {
      const names = (entry.args ?? []).map((arg) => arg.name);
      const args = Object.fromEntries(names.map((name, i) => [name, received[i] as string | undefined]));
      await run(entry, { args, options: command.opts() as never }, command);
    });
  }
}

function toOption(spec: OptionSpec): Option {
  const option = new Option(spec.flags, spec.description);
  if (spec.choices) option.choices(spec.choices);
  if (spec.repeatable) option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
  if (spec.required) option.makeOptionMandatory();
  if (spec.default !== undefined) option.default(spec.default);
  return option;
}

export { Command, CommanderError };
