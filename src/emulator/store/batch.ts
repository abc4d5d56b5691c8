import { compositeKey, type Change, type Collection, type TenantRecord } from './collection.js';

type AnyCollection = Collection<TenantRecord>;

/** Changes by collection, each collection's by record key, in the order the keys were first changed. */
export class ChangeSet {
  readonly byCollection = new Map<AnyCollection, Map<string, Change<TenantRecord>>>();

  get size(): number {
    let size = 0;
    for (const changes of this.byCollection.values()) size += changes.size;
    return size;
  }

  find(collection: AnyCollection, key: string): Change<TenantRecord> | undefined {
    return this.byCollection.get(collection)?.get(key);
  }

  set(collection: AnyCollection, key: string, change: Change<TenantRecord>): void {
    let changes = this.byCollection.get(collection);
    if (!changes) this.byCollection.set(collection, (changes = new Map()));
    changes.set(key, change);
  }

  merge(other: ChangeSet): void {
    for (const [collection, changes] of other.byCollection) {
      for (const [key, change] of changes) this.set(collection, key, change);
    }
  }
}

/**
 * One write of any number of records in any collections, saved all together or not at all. It
 * is built by a function the store's writer calls at the write's turn, so what it reads (`get`,
 * `findBy`) is the latest state: what is saved, plus the writes saved together with this one
 * that came before it. A function that throws adds nothing, and its caller gets the error.
 */
export class WriteBatch {
  readonly own = new ChangeSet();
  /** Kept out of the quotas' check (see bookkeeping). */
  unmetered = false;

  constructor(private readonly earlier: ChangeSet) {}

  get<T extends TenantRecord>(collection: Collection<T>, tenantId: string, id: string): T | undefined {
    const change = this.changeOf(collection, compositeKey(tenantId, id));
    return change ? ((change.record as T | null) ?? undefined) : collection.get(tenantId, id);
  }

  /** Looks a record up by a unique index of its collection, as `get` sees records. */
  findBy<T extends TenantRecord>(collection: Collection<T>, index: string, value: string): T | undefined {
    const matches = (record: T | undefined): record is T =>
      record !== undefined && collection.indexValue(index, record) === value;
    for (const set of [this.own, this.earlier]) {
      for (const change of set.byCollection.get(collection as unknown as AnyCollection)?.values() ?? []) {
        const latest = this.get(collection, change.tenantId, change.id);
        if (matches(latest)) return latest;
      }
    }
    const saved = collection.findBy(index, value);
    const latest = saved && this.get(collection, saved.tenant_id, saved.id);
    return matches(latest) ? latest : undefined;
  }

  /**
   * Lets this write pass a full quota (what it adds is still counted): bookkeeping of records
   * already kept, of a size bounded by their count (a webhook attempt, a run's failure), which a
   * full tenant must not make fail.
   */
  bookkeeping(): void {
    this.unmetered = true;
  }

  put<T extends TenantRecord>(collection: Collection<T>, record: T): void {
    const key = compositeKey(record.tenant_id, record.id);
    this.own.set(collection as unknown as AnyCollection, key, { tenantId: record.tenant_id, id: record.id, record });
  }

  /** Deletes a record; returns whether it existed. */
  delete<T extends TenantRecord>(collection: Collection<T>, tenantId: string, id: string): boolean {
    if (this.get(collection, tenantId, id) === undefined) return false;
    this.own.set(collection as unknown as AnyCollection, compositeKey(tenantId, id), { tenantId, id, record: null });
    return true;
  }

  private changeOf<T extends TenantRecord>(collection: Collection<T>, key: string): Change<TenantRecord> | undefined {
    const any = collection as unknown as AnyCollection;
    return this.own.find(any, key) ?? this.earlier.find(any, key);
  }
}
