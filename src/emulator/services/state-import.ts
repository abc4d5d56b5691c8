/**
 * The plan of a state import and the records it writes, made a slice at a time so that other
 * requests are served meanwhile (a 4.9 MB file held the emulator 4-8 s): opening the tenant's
 * entries, comparing them and sealing the file's all yield between slices. What the tenant changed
 * meanwhile is planned again in the last turn before the one write (`settle`), so the write is the
 * plan's as if the import had run at once.
 */
import { setImmediate as yieldToOthers } from 'node:timers/promises';
import { STATE_KINDS, type StateDocument, type StateKind, type StatePlan } from '../../api/state.js';
import type { Cipher } from '../crypto/cipher.js';
import type { Collection, TenantRecord } from '../store/collection.js';
import type { ApplicationRecord, ProxyRecord, ReactorRecord, TokenRecord } from '../store/records.js';
import type { Store } from '../store/store.js';
import { applicationEntry, proxyEntry, reactorEntry, recordOf, sameEntry, tokenEntry } from './state-entries.js';

/** Entries an import opens, compares or seals before it lets other requests run. */
export const IMPORT_SLICE = 250;

type Entry = StateDocument[StateKind][number];
type Change = StatePlan['changes'][number];
type Kept = StatePlan['kept'][number];
/** What the import does with one entry (of the file, or of the tenant). */
type Outcome = { change: Change } | { kept: Kept } | 'unchanged';

export interface ImportContext {
  store: Store;
  cipher: Cipher;
  tenantId: string;
  doc: StateDocument;
  replace: boolean;
  /** The Applications an import never deletes, and why. */
  protectedIds: Map<string, string>;
  /** The time of the import (the records' modified_at). */
  now: string;
}

/** Runs `each` over `items`, letting other requests run after every IMPORT_SLICE of them. */
export async function inSlices<T>(items: readonly T[], each: (item: T) => void): Promise<void> {
  for (const [i, item] of items.entries()) {
    if (i > 0 && i % IMPORT_SLICE === 0) await yieldToOthers();
    each(item);
  }
}

export function collectionOf(store: Store, kind: StateKind): Collection<TenantRecord> {
  const collections = {
    applications: store.applications,
    reactors: store.reactors,
    proxies: store.proxies,
    tokens: store.tokens,
  };
  return collections[kind] as unknown as Collection<TenantRecord>;
}

/** An import's plan, and the records its write puts (sealed, before the write's turn). */
export class ImportPlan {
  private readonly outcomes = new Map<string, Outcome>();
  /** The tenant's records the plan was made against (records are replaced on change, never edited). */
  private readonly seen = new Map<StateKind, Map<string, TenantRecord>>();
  private readonly wanted = new Map<StateKind, Map<string, Entry>>();
  readonly records = new Map<string, TenantRecord>();

  constructor(private readonly context: ImportContext) {
    for (const kind of STATE_KINDS) this.wanted.set(kind, new Map(context.doc[kind].map((entry) => [entry.id, entry])));
  }

  /** Compares the file with the tenant, a slice at a time. */
  async make(): Promise<void> {
    const { store, tenantId, doc } = this.context;
    for (const kind of STATE_KINDS) {
      const records = collectionOf(store, kind).list(tenantId);
      this.seen.set(kind, new Map(records.map((record) => [record.id, record])));
      const seen = this.seen.get(kind)!;
      await inSlices<Entry>(doc[kind], (entry) => this.planEntry(kind, entry.id, seen.get(entry.id)));
      await inSlices(records, (record) => {
        if (!this.wanted.get(kind)!.has(record.id)) this.planEntry(kind, record.id, record);
      });
    }
  }

  /** Seals what the write puts, a slice at a time. */
  async prepare(): Promise<void> {
    await inSlices([...this.outcomes.values()], (outcome) => {
      if (typeof outcome === 'object' && 'change' in outcome) this.prepareChange(outcome.change);
    });
  }

  /**
   * In the last turn before the write: what the tenant changed while the import yielded (a
   * record added, replaced or deleted since the plan saw it) is planned again, at once.
   */
  settle(): void {
    const { store, tenantId } = this.context;
    for (const kind of STATE_KINDS) {
      const seen = this.seen.get(kind)!;
      const now = new Map(
        collectionOf(store, kind)
          .list(tenantId)
          .map((record) => [record.id, record]),
      );
      const ids = new Set([...seen.keys(), ...now.keys()]);
      for (const id of ids) {
        const record = now.get(id);
        if (seen.get(id) === record) continue;
        this.records.delete(`${kind}\u0000${id}`);
        this.outcomes.delete(`${kind}\u0000${id}`);
        this.planEntry(kind, id, record);
        const outcome = this.outcomes.get(`${kind}\u0000${id}`);
        if (typeof outcome === 'object' && 'change' in outcome) this.prepareChange(outcome.change);
      }
    }
  }

  plan(dryRun: boolean): StatePlan {
    const plan: StatePlan = { dry_run: dryRun, replace: this.context.replace, changes: [], unchanged: 0, kept: [] };
    for (const outcome of this.outcomes.values()) {
      if (outcome === 'unchanged') plan.unchanged++;
      else if ('change' in outcome) plan.changes.push(outcome.change);
      else plan.kept.push(outcome.kept);
    }
    return plan;
  }

  /** What the import does with the entry `id` of `kind`, the tenant holding `record` for it. */
  private planEntry(kind: StateKind, id: string, record: TenantRecord | undefined): void {
    const key = `${kind}\u0000${id}`;
    const entry = this.wanted.get(kind)!.get(id);
    if (entry) {
      const before = record && this.entryOf(kind, record);
      const action = before ? 'update' : 'create';
      if (before && sameEntry(before, entry)) this.outcomes.set(key, 'unchanged');
      else this.outcomes.set(key, { change: { kind, id, name: nameOf(entry), action } });
      return;
    }
    if (!record || !this.context.replace) return;
    const name = 'name' in record && typeof record.name === 'string' ? record.name : null;
    const reason = kind === 'applications' ? this.context.protectedIds.get(id) : undefined;
    if (reason) this.outcomes.set(key, { kept: { kind, id, name, reason } });
    else this.outcomes.set(key, { change: { kind, id, name, action: 'delete' } });
  }

  private prepareChange(change: Change): void {
    if (change.action === 'delete') return;
    const { cipher, tenantId, now } = this.context;
    const entry = this.wanted.get(change.kind)!.get(change.id)!;
    this.records.set(
      `${change.kind}\u0000${change.id}`,
      recordOf(change.kind, cipher, tenantId, entry, now, undefined) as TenantRecord,
    );
  }

  private entryOf(kind: StateKind, record: TenantRecord): Entry {
    const { cipher } = this.context;
    switch (kind) {
      case 'applications':
        return applicationEntry(record as ApplicationRecord);
      case 'reactors':
        return reactorEntry(cipher, record as ReactorRecord);
      case 'proxies':
        return proxyEntry(cipher, record as ProxyRecord);
      case 'tokens':
        return tokenEntry(cipher, record as TokenRecord);
    }
  }
}

export function nameOf(entry: Entry): string | null {
  return 'name' in entry ? entry.name : null;
}
