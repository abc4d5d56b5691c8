import { Low, Memory } from 'lowdb';
import type { Adapter } from 'lowdb';
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

export interface CollectionOptions<T> {
  /** Number of files the collection is split into; a write rewrites one shard only. */
  shards?: number;
  /** Unique secondary indexes, e.g. an Application's key hash. */
  indexes?: Record<string, (record: T) => string | undefined>;
}

/**
 * One shard: a lowdb database over one file, whose writes are coalesced. While a write is on its
 * way to disk, every further change joins one pending write, so a burst of N changes costs at most
 * two file writes, and each caller's promise resolves once its own change is on disk.
 */
const DONE = Promise.resolve();

class Shard<T> {
  readonly records = new Map<string, T>();
  private readonly db: Low<ShardFile<T>>;
  private running: Promise<void> = Promise.resolve();
  private pending: Promise<void> | undefined;

  constructor(
    readonly adapter: Adapter<ShardFile<T>>,
    /** In memory there is nothing to write: a save is done as soon as it is asked for. */
    private readonly persistent: boolean,
  ) {
    this.db = new Low(adapter, { version: 1, records: [] });
  }

  save(): Promise<void> {
    if (!this.persistent) return DONE;
    this.pending ??= this.running
      .catch(() => {})
      .then(() => {
        this.pending = undefined;
        this.db.data = { version: 1, records: [...this.records.values()] };
        this.running = this.db.write();
        return this.running;
      });
    return this.pending;
  }

  /** A shard without a file (never written) loads empty. */
  async load(file: string): Promise<T[]> {
    await this.db.read();
    return shardRecords<T>(this.db.data, file);
  }

  /** Resolves once every write started so far has settled. */
  async idle(): Promise<void> {
    while (this.pending) await this.pending.catch(() => {});
    await this.running.catch(() => {});
  }
}

/**
 * A tenant-keyed collection held in memory and persisted through lowdb, split into shards.
 * Reads are synchronous map look-ups; writes apply at once in memory and resolve when on disk.
 */
export class Collection<T extends TenantRecord> {
  private readonly shards: Shard<T>[];
  private readonly byTenant = new Map<string, Map<string, T>>();
  private readonly indexes = new Map<string, { of: (record: T) => string | undefined; map: Map<string, T> }>();

  constructor(
    readonly name: string,
    adapterFor: ((shard: number, count: number) => Adapter<ShardFile<T>>) | null,
    options: CollectionOptions<T> = {},
  ) {
    const count = options.shards ?? 1;
    this.shards = Array.from(
      { length: count },
      (_, i) => new Shard<T>(adapterFor ? adapterFor(i, count) : new Memory<ShardFile<T>>(), adapterFor !== null),
    );
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

  /** Reads every shard; records are listed in creation order afterwards. */
  async load(fileOf: (shard: number) => string, present?: ReadonlySet<string>): Promise<void> {
    const all: T[] = [];
    for (const [i, shard] of this.shards.entries()) {
      const file = fileOf(i);
      // A shard whose file is not `present` (listed by the caller) was never written: empty, not read.
      if (present && !present.has(file)) continue;
      // Merged in shard order: records created in the same millisecond always list in one order.
      for (const record of await shard.load(file)) {
        shard.records.set(compositeKey(record.tenant_id, record.id), record);
        all.push(record);
      }
    }
    all.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
    for (const record of all) this.remember(record);
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

  /** Inserts or replaces a record (keeping its place in the listing); resolves once it is on disk. */
  put(record: T): Promise<void> {
    const previous = this.get(record.tenant_id, record.id);
    if (previous) this.unindex(previous);
    this.remember(record);
    const key = compositeKey(record.tenant_id, record.id);
    const shard = this.shardOf(record.tenant_id, record.id);
    shard.records.set(key, record);
    return shard.save();
  }

  /** Deletes a record; resolves to whether it existed, once the deletion is on disk. */
  async delete(tenantId: string, id: string): Promise<boolean> {
    const record = this.get(tenantId, id);
    if (!record) return false;
    this.forget(record);
    const key = compositeKey(tenantId, id);
    const shard = this.shardOf(tenantId, id);
    shard.records.delete(key);
    await shard.save();
    return true;
  }

  async flush(): Promise<void> {
    await Promise.all(this.shards.map((shard) => shard.idle()));
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

  private forget(record: T): void {
    this.byTenant.get(record.tenant_id)?.delete(record.id);
    this.unindex(record);
  }

  private unindex(record: T): void {
    for (const { of, map } of this.indexes.values()) {
      const value = of(record);
      if (value !== undefined && map.get(value) === record) map.delete(value);
    }
  }

  private shardOf(tenantId: string, id: string): Shard<T> {
    return this.shards[shardIndex(tenantId, id, this.shards.length)]!;
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

function compositeKey(tenantId: string, id: string): string {
  return `${tenantId}/${id}`;
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
