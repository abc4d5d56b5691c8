/**
 * Values kept in memory by owner and key, bounded by count and by weight (a number the caller gives
 * each value, e.g. its length): at most `perOwner` values and `ownerWeight` per owner, the oldest
 * dropped first, the newest always kept whatever it weighs; at most `owners` owners and `weight` in
 * all, the owner heard of least recently dropped first. The emulator keeps a tenant's recent
 * decisions and calls this way (svc/testing makes tenants by the thousand).
 */

export interface StoreBounds {
  /** Values per owner. */
  perOwner: number;
  /** Owners kept. */
  owners: number;
  /** Weight of every value kept. */
  weight: number;
  /** Weight per owner. */
  ownerWeight: number;
}

interface Owned<T> {
  entries: Map<string, { value: T; weight: number }>;
  weight: number;
}

export class BoundedStore<T> {
  /** By owner, the least recently heard of first. */
  private readonly owners = new Map<string, Owned<T>>();
  private total = 0;

  constructor(readonly bounds: StoreBounds) {}

  /** The weight of every value kept. */
  get weight(): number {
    return this.total;
  }

  /** Keeps `value` under `key` (a value kept under it before is dropped), then drops what is over the bounds. */
  set(owner: string, key: string, value: T, weight: number): void {
    const { bounds } = this;
    let owned = this.owners.get(owner);
    if (owned) this.owners.delete(owner);
    else owned = { entries: new Map(), weight: 0 };
    this.owners.set(owner, owned);
    if (this.owners.size > bounds.owners) this.forget(this.owners.keys().next().value!);
    this.drop(owned, key);
    owned.entries.set(key, { value, weight });
    owned.weight += weight;
    this.total += weight;
    while (owned.entries.size > 1 && (owned.entries.size > bounds.perOwner || owned.weight > bounds.ownerWeight))
      this.drop(owned, owned.entries.keys().next().value!);
    // Over the whole limit: the owners heard of least recently lose theirs first.
    for (const [id, other] of this.owners) {
      if (this.total <= bounds.weight || other === owned) break;
      this.forget(id);
    }
  }

  get(owner: string, key: string): T | undefined {
    return this.owners.get(owner)?.entries.get(key)?.value;
  }

  /** How many values an owner has kept. */
  count(owner: string): number {
    return this.owners.get(owner)?.entries.size ?? 0;
  }

  /** Drops everything an owner has kept. */
  forget(owner: string): void {
    const owned = this.owners.get(owner);
    if (!owned) return;
    this.total -= owned.weight;
    this.owners.delete(owner);
  }

  private drop(owned: Owned<T>, key: string): void {
    const stored = owned.entries.get(key);
    if (!stored) return;
    owned.entries.delete(key);
    owned.weight -= stored.weight;
    this.total -= stored.weight;
  }
}
