import { defineCommand } from '../../registry.js';
import { loadMatrix } from './matrix.js';
import { coverageOf, runMatrix } from './run.js';
import { showCoverage, showRun, unreachedOf } from './show.js';

export const test = defineCommand({
  name: 'test',
  description: 'run a matrix of access cases (YAML) against the target; exit 1 on any mismatch',
  args: [{ name: 'file', description: 'the matrix: a YAML file with a list of cases' }],
  options: [{ flags: '--coverage', description: 'how many cases each access rule decided, and the rules none did' }],
  notes: [
    'Each case names an Application (application: name or id, or api_key: KEY), a token (token: ID) or a',
    'container (container: /pci/high/), a permission, and expect: allow | deny, with transform: reveal |',
    `mask | redact for an allow. \${env:NAME} takes a value from the environment. See the README.`,
  ],
  examples: ['svc access test access.yaml', 'svc access test access.yaml --coverage --json'],
  async handler({ args, options }, ctx) {
    const cases = await loadMatrix(args.file, ctx.io.cwd, ctx.io.env);
    const run = await runMatrix(await ctx.client(), cases, args.file);
    const coverage = options.coverage ? coverageOf(run) : undefined;
    const { rules: _rules, ...shown } = run;
    const document = {
      file: args.file,
      ...shown,
      ...(coverage && { coverage: { applications: coverage, unreached: unreachedOf(coverage) } }),
    };
    await ctx.output.result(document, async () => {
      await showRun(ctx.output, run, args.file);
      if (coverage) await showCoverage(ctx.output, coverage);
    });
    return run.failed > 0 ? 1 : 0;
  },
});
