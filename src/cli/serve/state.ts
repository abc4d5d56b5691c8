/**
 * `svc serve --import FILE` and `--export-on-exit FILE`: the state file is read and opened before
 * the emulator starts (a bad file is one line, and nothing starts), imported into the bootstrap
 * tenant once it serves (before svc.yaml's apply), and the tenant exported on a clean stop.
 */
import type { StateDocument, StatePlan } from '../../api/state.js';
import { StateFormatError } from '../../api/state.js';
import type { EmulatorReady } from '../../emulator/index.js';
import { safeLines } from '../../lib/terminal-text.js';
import { exportState } from '../commands/state/export.js';
import { openDocument, passphrase, readStateFile } from '../commands/state/file.js';
import { UserError } from '../io/errors.js';
import type { IO } from '../io/process.js';

export const STATE_FLAGS = [
  { flags: '--import <file>', description: 'import this state file (svc state export) into the tenant once started' },
  {
    flags: '--export-on-exit <file>',
    description: 'export the tenant to this file on a clean stop (Ctrl-C, SIGTERM); sealed with SVC_STATE_PASSPHRASE',
  },
] as const;

export interface ServeState {
  /**
   * Imports the file given, if any, into the bootstrap tenant (before svc.yaml's apply); says so on
   * stderr. A refused import stops the emulator (`stop`) and throws: serve ends as it started.
   */
  importInto(started: EmulatorReady, stop: () => Promise<void>): Promise<void>;
  /** `dispose`, after the export on exit. */
  exportFirst(started: EmulatorReady, dispose: () => Promise<void>): () => Promise<void>;
  /** Exports the tenant to the file given, if any; says where on stderr (a failure too, without throwing). */
  exportAtExit(started: EmulatorReady): Promise<void>;
}

export async function serveState(
  options: { import?: string | undefined; exportOnExit?: string | undefined },
  io: IO,
): Promise<ServeState> {
  const file = options.import;
  let doc: StateDocument | undefined;
  if (file !== undefined) {
    try {
      doc = await openDocument(await readStateFile(file, io.cwd), () => passphrase(io, 'open'));
    } catch (error) {
      if (error instanceof StateFormatError)
        throw new UserError(`--import: ${file} ${error.message}; nothing started.`);
      throw error;
    }
  }
  // Asked now, not at the stop: no passphrase prompt while serving, none missing at the end.
  const plaintext = io.env.SVC_STATE_PASSPHRASE === undefined || io.env.SVC_STATE_PASSPHRASE === '';
  if (options.exportOnExit !== undefined && plaintext)
    throw new UserError('--export-on-exit seals the state with SVC_STATE_PASSPHRASE: set it.');
  const say = (line: string) => io.stderr.write(`${safeLines(line)}\n`);
  const state: ServeState = {
    async importInto(started, stop) {
      if (doc === undefined || file === undefined) return;
      let plan: StatePlan;
      try {
        plan = await (await clientOf(started)).state.import(doc);
      } catch (error) {
        await stop();
        throw error;
      }
      const count = (action: string) => plan.changes.filter((change) => change.action === action).length;
      say(`Imported ${file}: ${count('create')} added, ${count('update')} changed, ${plan.unchanged} unchanged.`);
    },
    exportFirst(started, dispose) {
      return async () => {
        await state.exportAtExit(started);
        await dispose();
      };
    },
    async exportAtExit(started) {
      if (options.exportOnExit === undefined) return;
      try {
        const written = await exportState(await clientOf(started), io, options.exportOnExit, false);
        say(`State exported to ${written.file}.`);
      } catch (error) {
        say(`The state was not exported to ${options.exportOnExit}: ${(error as Error).message}`);
      }
    },
  };
  return state;
}

async function clientOf(started: EmulatorReady) {
  const [{ ApiClient }, { bootstrapKeys }] = await Promise.all([
    import('../../client/index.js'),
    import('./bootstrap-keys.js'),
  ]);
  const { managementKey } = await bootstrapKeys(started);
  if (managementKey === undefined)
    throw new UserError(
      'The state cannot be imported or exported: the management key is unknown (pass --management-key).',
    );
  return new ApiClient({ baseUrl: started.url, managementKey });
}
