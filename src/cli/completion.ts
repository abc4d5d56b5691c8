import type { Command, Option } from 'commander';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** What completion needs of one command: its names, flags and subcommands. */
interface Node {
  names: string[];
  description: string;
  flags: { names: string[]; takesValue: boolean; choices: string[]; description: string }[];
  children: Node[];
}

function toNode(command: Command): Node {
  const options = command.options as Option[];
  return {
    names: [command.name(), ...command.aliases()],
    description: command.description(),
    flags: options.map((option) => ({
      names: [option.long, option.short].filter((name): name is string => name !== undefined),
      takesValue: option.required || option.optional,
      choices: option.argChoices ?? [],
      description: option.description,
    })),
    children: command.commands.filter((child) => child.name() !== 'help').map(toNode),
  };
}

/** The completion script of `shell` for the program's command tree. */
export function completionScript(program: Command, shell: Shell): string {
  const root = toNode(program);
  return shell === 'fish' ? fish(root) : bashLike(root, shell);
}

/** Every command path (`""`, `"applications"`, `"applications list"`) with its node; aliases included. */
function paths(node: Node, prefix: string[] = []): [string, Node][] {
  const own: [string, Node][] = [[prefix.join(' '), node]];
  return own.concat(node.children.flatMap((child) => child.names.flatMap((name) => paths(child, [...prefix, name]))));
}

const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

/**
 * bash (and zsh through bashcompinit): the words typed so far, flags and their values skipped, name a
 * command; its subcommands and flags (or a flag's choices) are the candidates.
 */
function bashLike(root: Node, shell: Shell): string {
  const all = paths(root);
  const valueFlags = [
    ...new Set(all.flatMap(([, node]) => node.flags.filter((flag) => flag.takesValue).flatMap((flag) => flag.names))),
  ];
  const cases = all.map(([path, node]) => {
    // Aliases are understood in the words typed, but offered only by their main name.
    const words = [...node.children.map((child) => child.names[0]!), ...node.flags.flatMap((flag) => flag.names)];
    return `    ${quote(path)}) words=${quote(words.join(' '))} ;;`;
  });
  // A flag's choices are its command's: `--type` of `applications create` is not `--type` of `tokens create`.
  const choices = all.flatMap(([path, node]) =>
    node.flags
      .filter((flag) => flag.choices.length > 0)
      .flatMap((flag) =>
        flag.names.map(
          (name) =>
            `    ${quote(`${path}|${name}`)}) COMPREPLY=($(compgen -W ${quote(flag.choices.join(' '))} -- "$cur")); return ;;`,
        ),
      ),
  );
  return `${shell === 'zsh' ? 'autoload -U +X bashcompinit && bashcompinit\n' : ''}# svc completion (${shell}): source it from your shell's startup file.
_svc_complete() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} path="" skip="" word words
  for word in "\${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
    if [ -n "$skip" ]; then skip=""; continue; fi
    case " ${valueFlags.join(' ')} " in *" $word "*) skip=1; continue ;; esac
    case "$word" in -*) continue ;; esac
    path="\${path:+$path }$word"
  done
  case "$path|$prev" in
${choices.join('\n')}
  esac
  case "$path" in
${cases.join('\n')}
    *) words="" ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _svc_complete svc
`;
}

/** fish: one `complete` line per subcommand and flag, conditioned on the command words already seen. */
function fish(root: Node): string {
  const lines = ['# svc completion (fish): save as ~/.config/fish/completions/svc.fish', 'complete -c svc -f'];
  const walk = (node: Node, trail: Node[]) => {
    const seen = trail.map((step) => `__fish_seen_subcommand_from ${step.names.join(' ')}`);
    const notYet =
      node.children.length > 0
        ? [`not __fish_seen_subcommand_from ${node.children.flatMap((child) => child.names).join(' ')}`]
        : [];
    const condition = (parts: string[]) => (parts.length === 0 ? '' : ` -n ${quote(parts.join('; and '))}`);
    const here = trail.length === 0 ? ['__fish_use_subcommand'] : [...seen, ...notYet];
    for (const child of node.children) {
      lines.push(`complete -c svc${condition(here)} -a ${quote(child.names[0]!)} -d ${quote(child.description)}`);
    }
    for (const flag of node.flags) {
      const long = flag.names.find((name) => name.startsWith('--'));
      const short = flag.names.find((name) => !name.startsWith('--'));
      const value = flag.takesValue
        ? flag.choices.length > 0
          ? ` -x -a ${quote(flag.choices.join(' '))}`
          : ' -r'
        : '';
      lines.push(
        `complete -c svc${condition(trail.length === 0 ? [] : seen)}${long ? ` -l ${long.slice(2)}` : ''}${short ? ` -s ${short.slice(1)}` : ''}${value} -d ${quote(flag.description)}`,
      );
    }
    for (const child of node.children) walk(child, [...trail, child]);
  };
  walk(root, []);
  return `${lines.join('\n')}\n`;
}
