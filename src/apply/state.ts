import path from 'node:path';
import { ApplyError } from './errors.js';
import { isRecord } from '../lib/is-record.js';
import { writeFileDurably } from '../lib/durable-file.js';
import { readJsonFile } from './files.js';
import { emptyTargetState, KINDS, type TargetState } from './types.js';

/** One target: a server and a tenant on it. State, keys and plans are kept per target. */
export interface TargetKey {
  url: string;
  tenantId: string;
}

interface StateDocument {
  version: 1;
  /** By base URL, then tenant id. */
  targets: Record<string, Record<string, TargetState>>;
}

/**
 * `.svc/state.json` beside svc.yaml: for each target, the name -> id of every resource svc manages
 * and a hash of its contents as last applied. Never a key, never a configuration value (the hash
 * covers configuration keys only). Without it svc finds resources again by their exact names.
 */
export class StateFile {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly file: string) {}

  static beside(configDir: string): StateFile {
    return new StateFile(path.join(configDir, '.svc', 'state.json'));
  }

  async read(target: TargetKey): Promise<TargetState> {
    const document = await this.document();
    return { ...emptyTargetState(), ...document.targets[target.url]?.[target.tenantId] };
  }

  /** Changes one target's state and writes the file (0600); updates run one at a time. */
  update(target: TargetKey, change: (state: TargetState) => void): Promise<void> {
    const next = this.queue.then(async () => {
      const document = await this.document();
      const state: TargetState = { ...emptyTargetState(), ...document.targets[target.url]?.[target.tenantId] };
      change(state);
      (document.targets[target.url] ??= {})[target.tenantId] = state;
      await writeFileDurably(this.file, `${JSON.stringify(document, null, 2)}\n`, 0o600);
    });
    this.queue = next.catch(() => {});
    return next;
  }

  private async document(): Promise<StateDocument> {
    const damaged = (reason: string) =>
      new ApplyError(
        `svc's state file ${this.file} is damaged (${reason}); ` +
          'move it aside and apply again: svc then finds its resources by name.',
      );
    const value = await readJsonFile(this.file, damaged);
    if (value === undefined) return { version: 1, targets: {} };
    if (!isRecord(value) || value.version !== 1 || !isRecord(value.targets))
      throw damaged('not a version 1 state document');
    for (const [url, tenants] of Object.entries(value.targets)) {
      if (!isRecord(tenants)) throw damaged(`targets["${url}"] is not an object`);
      for (const [tenant, state] of Object.entries(tenants)) {
        if (!isRecord(state)) throw damaged(`targets["${url}"]["${tenant}"] is not an object`);
        for (const kind of KINDS) {
          const entries = state[kind] ?? {};
          if (!isRecord(entries)) throw damaged(`${kind} of ${url} is not an object`);
          for (const [name, entry] of Object.entries(entries)) {
            if (!isRecord(entry) || typeof entry.id !== 'string' || typeof entry.hash !== 'string') {
              throw damaged(`${kind}.${name} of ${url} has no id and hash`);
            }
          }
        }
      }
    }
    return value as unknown as StateDocument;
  }
}
