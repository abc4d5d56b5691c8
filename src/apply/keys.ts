import path from 'node:path';
import type { Application } from '../api/types.js';
import { ApplyError } from './errors.js';
import { isRecord } from '../lib/is-record.js';
import { writeFileDurably } from '../lib/durable-file.js';
import { readJsonFile } from './files.js';
import type { TargetKey } from './state.js';
import { setEntry } from './types.js';

/** A key svc got when it created an Application: the API returns it once. */
export interface CreatedKey {
  name: string;
  id: string;
  type: string;
  key: string;
}

/**
 * What keys.json holds for one Application: its key, or (`lost`) why svc has none and the command
 * that issues a new one, where a reader looking for the key finds it.
 */
export type KeyEntry = { id: string; type: string } & ({ key: string } | { lost: string });

/** An Application whose key the server returned to an apply that was killed before it saved it. */
export interface LostKey {
  name: string;
  id: string;
  type: string;
  /** The sentence said about it: which key is lost and the command that issues a new one. */
  message: string;
}

/**
 * The journal entry of one Application create, written before its request is sent: the ids the
 * Applications of that name had then, so that one made by the request is told from those.
 */
interface PendingCreate {
  started: string;
  existing: string[];
}

export interface KeyChanges {
  renamed: [from: string, to: string][];
  deleted: string[];
}

type ByTarget<T> = Record<string, Record<string, Record<string, T>>>;

interface KeysDocument {
  version: 1;
  targets: ByTarget<KeyEntry>;
  /** Creates under way (or cut short): by target, then Application name. */
  pending?: ByTarget<PendingCreate>;
}

/**
 * `.svc/keys.json` (0600, in a 0700 folder): the keys of the Applications apply created, by target
 * and name. The only place apply keeps a key; plans, state, logs and --json never hold one. Each key
 * is written (fsynced, the folder too) as soon as the server returns it, before the apply goes on;
 * a create is journaled here before its request is sent, so that an apply killed in between leaves
 * the next one able to say which key was lost (lostKeys).
 */
export class KeysFile {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly file: string) {}

  static beside(configDir: string): KeysFile {
    return new KeysFile(path.join(configDir, '.svc', 'keys.json'));
  }

  /** Journals a create before its request: `existing` are the ids of the Applications so named now. */
  creating(target: TargetKey, name: string, existing: string[], now = new Date()): Promise<void> {
    return this.change((document) => {
      pendingOf(document, target)[name] = { started: now.toISOString(), existing };
    });
  }

  /** Saves a new key and closes its journal entry, in one write. */
  created(target: TargetKey, { name, ...entry }: CreatedKey): Promise<void> {
    return this.change((document) => {
      setEntry(keysOf(document, target), name, entry);
      delete pendingOf(document, target)[name];
    });
  }

  /** Closes the journal entry of a create the server refused: nothing was made. */
  refused(target: TargetKey, name: string): Promise<void> {
    return this.change((document) => {
      const pending = pendingOf(document, target);
      if (!Object.hasOwn(pending, name)) return false;
      delete pending[name];
    });
  }

  /** The journal of one target: creates whose key was not saved (yet). */
  async pending(target: TargetKey): Promise<Record<string, PendingCreate>> {
    const document = await this.document();
    return document.pending?.[target.url]?.[target.tenantId] ?? {};
  }

  /**
   * Closes the journal entries an earlier apply left: each lost key is recorded as such (keys.json
   * says which and how to get a new one), each create that never reached the server is dropped.
   */
  settle(target: TargetKey, lost: LostKey[], dropped: string[]): Promise<void> {
    return this.change((document) => {
      if (lost.length + dropped.length === 0) return false;
      const pending = pendingOf(document, target);
      const keys = keysOf(document, target);
      for (const { name, id, type, message } of lost) {
        setEntry(keys, name, { id, type, lost: message });
        delete pending[name];
      }
      for (const name of dropped) delete pending[name];
    });
  }

  /** Moves renamed Applications' keys, drops deleted ones. */
  update(target: TargetKey, changes: KeyChanges): Promise<void> {
    return this.change((document) => {
      if (changes.renamed.length + changes.deleted.length === 0) return false;
      const keys = keysOf(document, target);
      let touched = false;
      for (const [from, to] of changes.renamed) {
        if (!Object.hasOwn(keys, from)) continue;
        setEntry(keys, to, keys[from]!);
        delete keys[from];
        touched = true;
      }
      for (const name of changes.deleted) touched = (Object.hasOwn(keys, name) && delete keys[name]) || touched;
      return touched;
    });
  }

  /** The keys recorded for a target, by Application name. */
  async read(target: TargetKey): Promise<Record<string, KeyEntry>> {
    return (await this.document()).targets[target.url]?.[target.tenantId] ?? {};
  }

  /** One read-change-write at a time; `edit` returning false writes nothing. */
  private change(edit: (document: KeysDocument) => boolean | void): Promise<void> {
    const next = this.queue.then(async () => {
      const document = await this.document();
      if (edit(document) === false) return;
      dropEmpty(document);
      await writeFileDurably(this.file, `${JSON.stringify(document, null, 2)}\n`, 0o600);
    });
    this.queue = next.catch(() => {});
    return next;
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
    if (value.pending !== undefined && !isRecord(value.pending)) throw damaged('"pending" is not an object');
    return value as unknown as KeysDocument;
  }
}

/**
 * The Applications an apply created but never saved the key of, and the journal entries that made
 * nothing: an Application named as a journaled create, that the journal did not see before the
 * request and whose id has no entry in keys.json, was made by that request. Its key went only to the
 * apply that was killed: nobody holds it, and only a new one (regenerate) can be had.
 */
export function lostKeys(
  pending: Record<string, PendingCreate>,
  keys: Record<string, KeyEntry>,
  applications: Application[],
): { lost: LostKey[]; dropped: string[] } {
  const known = new Set(Object.values(keys).map((entry) => entry.id));
  const lost: LostKey[] = [];
  const dropped: string[] = [];
  for (const [name, entry] of Object.entries(pending)) {
    const before = new Set(Array.isArray(entry.existing) ? entry.existing : []);
    const made = applications.filter((app) => app.name === name && !before.has(app.id) && !known.has(app.id));
    if (made.length === 0) dropped.push(name);
    for (const app of made) {
      const named = applications.filter((each) => each.name === name).length === 1;
      const command = `svc applications regenerate ${named ? shellWord(name) : app.id}`;
      const message =
        `applications.${name} (${app.id}) was created by an apply that was stopped before it saved its key: ` +
        `the key is lost; \`${command}\` issues a new one`;
      lost.push({ name, id: app.id, type: app.type, message });
    }
  }
  return { lost, dropped };
}

/** A name as a shell takes it: quoted unless it is plain. */
function shellWord(text: string): string {
  return /^[A-Za-z0-9_.:@%+=,/-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

function keysOf(document: KeysDocument, target: TargetKey): Record<string, KeyEntry> {
  return slot(slot(document.targets, target.url), target.tenantId);
}

function pendingOf(document: KeysDocument, target: TargetKey): Record<string, PendingCreate> {
  return slot(slot((document.pending ??= {}), target.url), target.tenantId);
}

/** `record[name]`, made an empty object when absent: an own property whatever the name (`__proto__`). */
function slot<T>(record: Record<string, Record<string, T>>, name: string): Record<string, T> {
  if (!Object.hasOwn(record, name)) setEntry(record, name, {});
  return record[name]!;
}

/** The journal's emptied targets go: a file with no create under way has no `pending`. */
function dropEmpty(document: KeysDocument): void {
  const pending = document.pending;
  if (!pending) return;
  for (const [url, tenants] of Object.entries(pending)) {
    for (const [tenant, names] of Object.entries(tenants)) if (Object.keys(names).length === 0) delete tenants[tenant];
    if (Object.keys(tenants).length === 0) delete pending[url];
  }
  if (Object.keys(pending).length === 0) delete document.pending;
}
