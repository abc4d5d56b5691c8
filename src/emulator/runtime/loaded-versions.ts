/**
 * The code versions a sandbox process holds, seen from the emulator: asked for (loading) or ready,
 * most recently used last, the id each belongs to, and the ones pinned by a call on its way to them.
 */
export class LoadedVersions {
  /** Versions loaded or loading, most recently used last. */
  private readonly loads = new Map<string, Promise<void>>();
  /** Versions whose load has finished. */
  private readonly ready = new Set<string>();
  private readonly ids = new Map<string, string>();
  private readonly pins = new Map<string, number>();

  get size(): number {
    return this.loads.size;
  }

  /** Some call is on its way to a version (between its load and its invoke). */
  get pinned(): boolean {
    return this.pins.size > 0;
  }

  has(vid: string): boolean {
    return this.loads.has(vid);
  }

  /** The load of a version asked for already, marked the most recently used. */
  touch(vid: string): Promise<void> | undefined {
    const loading = this.loads.get(vid);
    if (loading) {
      this.loads.delete(vid);
      this.loads.set(vid, loading);
    }
    return loading;
  }

  /** Whether a version is loaded and ready (not only asked for); marks it the most recently used. */
  isReady(vid: string): boolean {
    if (!this.ready.has(vid)) return false;
    this.touch(vid);
    return true;
  }

  /** A load asked for: forgotten again if it fails (and is still this version's). */
  add(vid: string, id: string, loading: Promise<void>): void {
    this.ids.set(vid, id);
    this.loads.set(vid, loading);
    loading.catch(() => this.loads.get(vid) === loading && this.forget(vid));
  }

  /** The sandbox said the version loaded. */
  markReady(vid: string): void {
    if (this.loads.has(vid)) this.ready.add(vid);
  }

  /** The id (a reactor's, a transform's) a version belongs to. */
  idOf(vid: string): string | undefined {
    return this.ids.get(vid);
  }

  /** Keeps a version loaded while a call is on its way to it; answers the unpin. */
  pin(vid: string): () => void {
    this.pins.set(vid, (this.pins.get(vid) ?? 0) + 1);
    return () => {
      const left = (this.pins.get(vid) ?? 1) - 1;
      if (left > 0) this.pins.set(vid, left);
      else this.pins.delete(vid);
    };
  }

  /** The least recently used versions beyond `keep` that `inUse` does not hold and no call is on its way to. */
  beyond(keep: number, inUse: (vid: string) => boolean): string[] {
    const spare: string[] = [];
    let left = this.loads.size;
    for (const vid of this.loads.keys()) {
      if (left <= keep) break;
      if (!inUse(vid) && !this.pins.has(vid)) {
        spare.push(vid);
        left--;
      }
    }
    return spare;
  }

  forget(vid: string): void {
    this.loads.delete(vid);
    this.ready.delete(vid);
    this.ids.delete(vid);
  }

  clear(): void {
    this.loads.clear();
    this.ready.clear();
  }
}
