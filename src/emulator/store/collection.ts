import type { RecordKind } from '../../api/quotas.js';
import { jsonWeight } from '../../lib/json-weight.js';
import type { WriteBatch } from './batch.js';
import { corruptFile } from './errors.js';

/** Every stored record belongs to a tenant; no read or write of a collection crosses tenants. */
export interface TenantRecord {
  id: string;
  tenant_id: string;
  created_at: string;
}

/** The content of one shard's file. */
export interface ShardFile<T> {
  version: 1;
  records: T[];
}

/** A record's new state in a write: `null` deletes it. */
export interface Change<T> {
  tenantId: string;
  id: string;
  record: T | null;
}

export interface CollectionOptions<T> {
  /** Number of files the collection is split into; a write rewrites only the shards it touches. */
  shards?: number;
  /** Unique secondary indexes, e.g. an Application's key hash. */
  indexes?: Record<string, (record: T) => string | undefined>;
  /** Why a record read from disk cannot be served (a missing field), or undefined when it can. */
  check?: (record: Record<string, unknown>) => string | undefined;
  /** The quota its records count against, and what one weighs (default: about its JSON's length). */
  quota?: { kind: RecordKind; weigh?: (record: T) => number };
}

/** Where a collection counts what its records weigh as they come and go (the emulator's Quotas). */
export interface Meter {
  charge(tenantId: string, kind: RecordKind, bytes: number): void;
}

/** How a collection's writes reach the disk: the store's writer (see writer.ts). */
export type WriteFn = <R>(fn: (batch: WriteBatch) => R) => Promise<R>;

/**
 * A tenant-keyed collection held in memory, split into shard files. Reads are synchronous map
 * look-ups of what is on disk: a change is served only once the store's writer has saved it, so
 * a write that fails leaves nothing behind. Writes go through `store.write` (several records,
 * all or nothing) or the `put`/`delete` shorthands here.
 */
export class Collection<T extends TenantRecord> {
  private readonly shards: Map<string, T>[];
  /** Per shard, records that could not be read: never served, written back as they are. */
  private readonly kept: unknown[][];
  private readonly byTenant = new Map<string, Map<string, T>>();
  private readonly indexes = new Map<string, { of: (record: T) => string | undefined; map: Map<string, T> }>();
  private readonly check: CollectionOptions<T>['check'];
  /** The quota its records count against (undefined: none). */
  readonly quotaKind: RecordKind | undefined;
  private readonly weigh: (record: T) => number;
  /** Each record's weight, found once: what it was charged is what it releases. */
  private readonly weights = new WeakMap<T, number>();

  constructor(
    readonly name: string,
    private readonly writeFn: WriteFn,
    options: CollectionOptions<T> = {},
    private readonly meter?: Meter,
  ) {
    this.quotaKind = options.quota?.kind;
    this.weigh = options.quota?.weigh ?? jsonWeight;
    const count = options.shards ?? 1;
    this.shards = Array.from({ length: count }, () => new Map<string, T>());
    this.kept = Array.from({ length: count }, (): unknown[] => []);
    this.check = options.check;
    for (const [indexName, of] of Object.entries(options.indexes ?? {})) {
      this.indexes.set(indexName, { of, map: new Map() });
    }
  }

  get shardCount(): number {
    return this.shards.length;
  }

  /** Whether the collection holds any record at all. */
  get empty(): boolean {
    for (const records of this.byTenant.values()) if (records.size > 0) return false;
    return true;
  }

  /**
   * Takes in the records read from shard `shard`'s file. Those that cannot be served are kept
   * aside (written back unchanged with the shard) and returned as problems to report.
   */
  load(shard: number, data: unknown, file: string): { loaded: T[]; problems: string[] } {
    const loaded: T[] = [];
    const problems: string[] = [];
    shardRecords<unknown>(data, file).forEach((raw, i) => {
      const problem = this.problemOf(raw);
      if (problem !== undefined) {
        this.kept[shard]!.push(raw);
        problems.push(unservedLine(file, i, raw, problem));
        return;
      }
      const record = raw as T;
      this.shards[shard]!.set(compositeKey(record.tenant_id, record.id), record);
      loaded.push(record);
    });
    return { loaded, problems };
  }

  /** Adds loaded records to the listing, in the order given (the store sorts them by creation). */
  index(records: T[]): void {
    for (const record of records) {
      this.remember(record);
      this.charge(record, 1);
    }
  }

  /** What a record weighs against its quota (0 for a collection without one). */
  weightOf(record: T): number {
    if (this.quotaKind === undefined) return 0;
    let weight = this.weights.get(record);
    if (weight === undefined) this.weights.set(record, (weight = this.weigh(record)));
    return weight;
  }

  get(tenantId: string, id: string): T | undefined {
    return this.byTenant.get(tenantId)?.get(id);
  }

  /** The tenant's records in creation order. */
  list(tenantId: string): T[] {
    return [...(this.byTenant.get(tenantId)?.values() ?? [])];
  }

  /** How many records the tenant has, without listing them. */
  count(tenantId: string): number {
    return this.byTenant.get(tenantId)?.size ?? 0;
  }

  /** The tenant's records in creation order, oldest first, without copying them (don't put or delete while iterating). */
  *values(tenantId: string): IterableIterator<T> {
    const records = this.byTenant.get(tenantId);
    if (records) yield* records.values();
  }

  /** Every record of every tenant; for sweeps (expiry), never for answering a request. */
  *everything(): IterableIterator<T> {
    for (const records of this.byTenant.values()) yield* records.values();
  }

  /** Looks a record up by a unique secondary index. */
  findBy(index: string, value: string): T | undefined {
    return this.indexes.get(index)?.map.get(value);
  }

  /** A record's value for an index (undefined: none, or no such index). */
  indexValue(index: string, record: T): string | undefined {
    return this.indexes.get(index)?.of(record);
  }

  /** Inserts or replaces a record (keeping its place in the listing); resolves once it is on disk. */
  put(record: T): Promise<void> {
    return this.writeFn((batch) => batch.put(this, record));
  }

  /** Deletes a record; resolves to whether it existed, once the deletion is on disk. */
  delete(tenantId: string, id: string): Promise<boolean> {
    return this.writeFn((batch) => batch.delete(this, tenantId, id));
  }

  shardOf(tenantId: string, id: string): number {
    return shardIndex(tenantId, id, this.shards.length);
  }

  /** A shard's file content: what is saved, with `changes` (of any shard) laid over it, and the kept records. */
  content(shard: number, changes?: ReadonlyMap<string, Change<T>>): ShardFile<unknown> {
    let records: Map<string, T> = this.shards[shard]!;
    if (changes) {
      records = new Map(records);
      for (const [key, change] of changes) {
        if (this.shardOf(change.tenantId, change.id) !== shard) continue;
        if (change.record) records.set(key, change.record);
        else records.delete(key);
      }
    }
    return { version: 1, records: [...records.values(), ...this.kept[shard]!] };
  }

  /** Makes saved changes what is served. Only the writer calls this, once they are on disk. */
  apply(changes: ReadonlyMap<string, Change<T>>): void {
    for (const [key, change] of changes) {
      const previous = this.get(change.tenantId, change.id);
      if (previous) {
        this.unindex(previous);
        this.charge(previous, -1);
      }
      const shard = this.shards[this.shardOf(change.tenantId, change.id)]!;
      if (change.record) {
        shard.set(key, change.record);
        this.remember(change.record);
        this.charge(change.record, 1);
      } else {
        shard.delete(key);
        const records = this.byTenant.get(change.tenantId);
        records?.delete(change.id);
        // A tenant's last record gone (svc/testing makes and deletes a tenant per test): its map goes too.
        if (records?.size === 0) this.byTenant.delete(change.tenantId);
      }
    }
  }

  /** Why a record read from a file cannot be served, or undefined when it can. */
  problemOf(raw: unknown): string | undefined {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'is not an object';
    const record = raw as Record<string, unknown>;
    for (const field of ['id', 'tenant_id', 'created_at']) {
      if (typeof record[field] !== 'string' || record[field] === '') return `has no "${field}"`;
    }
    return this.check?.(record);
  }

  private charge(record: T, sign: 1 | -1): void {
    if (this.meter && this.quotaKind !== undefined)
      this.meter.charge(record.tenant_id, this.quotaKind, sign * this.weightOf(record));
  }

  /** Map.set keeps an existing key's position, so a replaced record keeps its creation-order place. */
  private remember(record: T): void {
    let records = this.byTenant.get(record.tenant_id);
    if (!records) this.byTenant.set(record.tenant_id, (records = new Map()));
    records.set(record.id, record);
    for (const { of, map } of this.indexes.values()) {
      const value = of(record);
      if (value !== undefined) map.set(value, record);
    }
  }

  private unindex(record: T): void {
    for (const { of, map } of this.indexes.values()) {
      const value = of(record);
      if (value !== undefined && map.get(value) === record) map.delete(value);
    }
  }
}

/**
 * The shard that holds a record: FNV-1a of its composite key, modulo the shard count. It decides
 * which file a record is in, so it must stay as it is; changing the count means resharding.
 */
export function shardIndex(tenantId: string, id: string, count: number): number {
  return count === 1 ? 0 : fnv1a(compositeKey(tenantId, id)) % count;
}

/** The records of a shard file's content (null: no file); anything else is damage, named by its file. */
export function shardRecords<T>(data: unknown, file: string): T[] {
  if (data === null) return [];
  if (typeof data !== 'object' || !Array.isArray((data as ShardFile<T>).records)) {
    throw corruptFile(file, 'expected an object with a "records" array');
  }
  return (data as ShardFile<T>).records;
}

export function compositeKey(tenantId: string, id: string): string {
  return `${tenantId}/${id}`;
}

/** The problem line of record `index` (from 0) of `file`, which cannot be served. */
export function unservedLine(file: string, index: number, raw: unknown, problem: string): string {
  return `${file}: record ${index + 1}${idOf(raw)} ${problem}; it is kept in the file but not served. Fix or remove it.`;
}

function idOf(raw: unknown): string {
  const id = typeof raw === 'object' && raw !== null ? (raw as { id?: unknown }).id : undefined;
  return typeof id === 'string' ? ` (id ${id})` : '';
}

/** FNV-1a: a fast, stable string hash for spreading records over shards. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
