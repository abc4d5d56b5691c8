import type { StatePlan } from '../../../api/state.js';
import { StateFormatError } from '../../../api/state.js';
import type { ApiClient } from '../../../client/index.js';
import { UserError } from '../../io/errors.js';
import type { IO } from '../../io/process.js';
import { defineCommand } from '../../registry.js';
import { openDocument, passphrase, readStateFile } from './file.js';
import { printPlan } from './plan.js';

export const importCommand = defineCommand({
  name: 'import',
  description: 'load a state file into the tenant: adds and updates (keeps what the file does not name), or --replace',
  args: [{ name: 'file', description: 'a file of svc state export' }],
  options: [
    { flags: '--replace', description: 'make the tenant equal to the file: delete what it does not name' },
    { flags: '--dry-run', description: 'print what would change, and change nothing' },
  ],
  notes: [
    'A sealed file needs the passphrase it was exported with (SVC_STATE_PASSPHRASE, or asked on a terminal).',
    "The management key's own Application and the tenant's bootstrap Applications are never deleted.",
  ],
  examples: ['svc state import state.json --dry-run', 'svc state import state.json --replace'],
  async handler({ args, options }, ctx) {
    const plan = await importState(await ctx.client(), ctx.io, args.file, {
      replace: options.replace === true,
      dryRun: options.dryRun === true,
    });
    await ctx.output.result(plan, () => printPlan(ctx.output, plan, args.file));
  },
});

/** A state file read, opened and sent in one request; a bad file is one line and changes nothing. */
export async function importState(
  client: ApiClient,
  io: IO,
  file: string,
  options: { replace: boolean; dryRun: boolean },
): Promise<StatePlan> {
  const value = await readStateFile(file, io.cwd);
  let doc: unknown;
  try {
    doc = await openDocument(value, () => passphrase(io, 'open'));
  } catch (error) {
    if (error instanceof StateFormatError) throw new UserError(`${file} ${error.message}; nothing changed.`);
    throw error;
  }
  return client.state.import(doc, options);
}
