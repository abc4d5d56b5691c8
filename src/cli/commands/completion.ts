import { SHELLS, completionScript, type Shell } from '../completion.js';
import { UsageError } from '../io/errors.js';
import { defineCommand } from '../registry.js';

export const completion = defineCommand({
  name: 'completion',
  description: 'print the shell completion script for bash, zsh or fish',
  args: [{ name: 'shell', description: SHELLS.join(' | ') }],
  examples: [
    'svc completion bash > ~/.local/share/bash-completion/completions/svc',
    'source <(svc completion zsh)    # in ~/.zshrc',
    'svc completion fish > ~/.config/fish/completions/svc.fish',
  ],
  async handler({ args }, ctx) {
    const shell = args.shell as Shell;
    if (!SHELLS.includes(shell))
      throw new UsageError(`svc completion takes one of ${SHELLS.join(', ')}, not "${args.shell}".`);
    // The tree is read from the program itself, so the script never lags behind the commands.
    const [{ createProgram }, { allCommands }] = await Promise.all([import('../main.js'), import('./index.js')]);
    const program = createProgram(ctx.io, [], async () => {}, await allCommands());
    ctx.io.stdout.write(completionScript(program, shell));
  },
});
