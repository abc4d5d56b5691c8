import { UserError } from '../io/errors.js';
import { defineCommand } from '../registry.js';

export const importCommand = defineCommand({
  name: 'import',
  description: 'write svc.yaml and the code files from what the target holds, so that `svc apply` plans no change',
  options: [
    {
      flags: '--out <file>',
      description: 'the svc.yaml to write (code and .env files go beside it)',
      default: 'svc.yaml',
    },
    { flags: '--force', description: 'overwrite files that exist' },
  ],
  examples: ['svc import', 'svc import --out infra/svc.yaml --base-url https://api.example.com'],
  async handler({ options }, ctx) {
    const client = await ctx.client();
    // The apply engine (yaml, ajv, acorn) loads with the command that needs it, not with every command.
    const { ApplyError, importTarget } = await import('../../apply/index.js');
    let result: Awaited<ReturnType<typeof importTarget>>;
    try {
      result = await importTarget({ client, out: options.out, cwd: ctx.io.cwd, force: options.force ?? false });
    } catch (error) {
      if (error instanceof ApplyError) throw new UserError(error.message, { cause: error });
      throw error;
    }
    for (const warning of result.warnings) ctx.output.note(`Warning: ${warning}`);
    await ctx.output.result(result, () => {
      const { applications, reactors, proxies } = result.counts;
      const counted = [
        `${applications} Application${applications === 1 ? '' : 's'}`,
        `${reactors} reactor${reactors === 1 ? '' : 's'}`,
        `${proxies} prox${proxies === 1 ? 'y' : 'ies'}`,
      ];
      ctx.output.line(`Imported ${counted[0]}, ${counted[1]} and ${counted[2]} into ${result.file}.`);
      for (const file of result.written) ctx.output.line(`  ${file}`);
      ctx.output.line('`svc apply` now plans no change.');
      ctx.output.line('.gitignore keeps .svc/ (state and keys) and the .env files (configuration values) out of git.');
    });
  },
});
