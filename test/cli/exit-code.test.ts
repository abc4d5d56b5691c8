import { describe, expect, test } from 'vitest';
import { UserError } from '../../src/cli/io/errors.js';
import { defineCommand } from '../../src/cli/registry.js';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

// A stand-in for `svc apply --detailed-exitcode`: a success that says more than "ok" with its exit code.
const plan = defineCommand({
  name: 'plan',
  description: 'report pending changes',
  options: [
    { flags: '--pending <n>', description: 'how many changes are pending', default: '0' },
    { flags: '--detailed-exitcode', description: 'exit 2 when changes are pending' },
  ],
  async handler({ options }, ctx) {
    if (!/^\d+$/.test(options.pending)) throw new UserError(`--pending takes a number, not "${options.pending}".`);
    const pending = Number(options.pending);
    await ctx.output.result({ pending }, () => ctx.output.line(`${pending} pending`));
    return options.detailedExitcode && pending > 0 ? 2 : undefined;
  },
});

describe('a handler that returns an exit code', () => {
  test('exits with it, after printing its result', async () => {
    const result = await runSvc('plan --pending 3 --detailed-exitcode --json', {
      cwd: await tempDir(),
      commands: [plan],
    });
    expect(result.code).toBe(2);
    expect(result.json()).toEqual({ pending: 3 });
    expect(result.stderr).toBe('');
  });

  test('returning nothing exits 0', async () => {
    const cwd = await tempDir();
    const result = await runSvc('plan --pending 3', { cwd, commands: [plan] });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('3 pending\n');
    expect((await runSvc('plan --detailed-exitcode', { cwd, commands: [plan] })).code).toBe(0);
  });

  test('an error still exits with its own code, whatever the handler would have returned', async () => {
    const result = await runSvc('plan --pending x --detailed-exitcode', { cwd: await tempDir(), commands: [plan] });
    expectOneLineError(result, 1, 'Error: --pending takes a number, not "x".');
  });
});
