import path from 'node:path';
import { ApplyError } from './errors.js';
import { isRecord, readJsonFile, writeFileAtomic } from './files.js';
import type { TargetKey } from './state.js';

/** A key svc got when it created an Application: the API returns it once. */
export interface CreatedKey {
  name: string;
  id: string;
  type: string;
  key: string;
}

export interface KeyChanges {
  created: CreatedKey[];
  renamed: [from: string, to: string][];
  deleted: string[];
}

interface KeysDocument {
  version: 1;
  targets: Record<string, Record<string, Record<string, Omit<CreatedKey, 'name'>>>>;
}

/**
 * `.svc/keys.json` (0600, in a 0700 folder): the keys of the Applications apply created, by
 * target and name. The only place apply keeps a key; plans, state, logs and --json never hold one.
 */
export class KeysFile {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly file: string) {}

  static beside(configDir: string): KeysFile {
    return new KeysFile(path.join(configDir, '.svc', 'keys.json'));
  }

  /** Records new keys, moves renamed Applications' keys, drops deleted ones. */
  update(target: TargetKey, changes: KeyChanges): Promise<void> {
    const next = this.queue.then(async () => {
      if (changes.created.length + changes.renamed.length + changes.deleted.length === 0) return;
      const document = await this.document();
      const keys = ((document.targets[target.url] ??= {})[target.tenantId] ??= {});
      let touched = changes.created.length > 0;
      for (const [from, to] of changes.renamed) {
        if (keys[from] === undefined) continue;
        keys[to] = keys[from];
        delete keys[from];
        touched = true;
      }
      for (const name of changes.deleted) touched = delete keys[name] || touched;
      for (const { name, ...rest } of changes.created) keys[name] = rest;
      if (touched) await writeFileAtomic(this.file, `${JSON.stringify(document, null, 2)}\n`, 0o600);
    });
    this.queue = next.catch(() => {});
    return next;
  }

  /** The keys recorded for a target, by Application name. */
  async read(target: TargetKey): Promise<Record<string, Omit<CreatedKey, 'name'>>> {
    return (await this.document()).targets[target.url]?.[target.tenantId] ?? {};
  }

  private async document(): Promise<KeysDocument> {
    const damaged = (reason: string) =>
      new ApplyError(
        `The keys file ${this.file} is damaged (${reason}); move it aside (it may hold the only copy of some keys).`,
      );
    const value = await readJsonFile(this.file, damaged);
    if (value === undefined) return { version: 1, targets: {} };
    if (!isRecord(value) || value.version !== 1 || !isRecord(value.targets))
      throw damaged('not a version 1 keys document');
    return value as unknown as KeysDocument;
  }
}
