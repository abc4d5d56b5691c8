import path from 'node:path';
import { ChangeSet, WriteBatch } from './batch.js';
import type { Collection, TenantRecord } from './collection.js';
import { FILES_IN_FLIGHT, mapBounded } from './concurrency.js';
import { DurableJsonFile } from '../../lib/durable-file.js';
import { StoreError, StoreWriteError } from './errors.js';
import { describeCause, remedyFor, type StoreFileSystem } from './io.js';
import type { Journal, JournalChange } from './journal.js';

type AnyCollection = Collection<TenantRecord>;

/** Bounds on what waits for a checkpoint under sustained load: the entries a start may replay, the files then written. */
const MAX_JOURNAL_ENTRIES = 64;
const MAX_DIRTY_FILES = 2048;
/** How long the writer waits for more writes before it rewrites shard files. */
const PAUSE_MS = 5;

/** Where a collection's shard lives on disk; a writer over no files keeps everything in memory. */
export interface ShardFiles {
  fileOf(collection: AnyCollection, shard: number): string;
}

interface Waiting {
  build: (batch: WriteBatch) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** A shard file, named by its collection and number. */
interface ShardRef {
  collection: AnyCollection;
  shard: number;
}

/**
 * The store's single writer. Writes queue up; while one group of them is being saved, the next
 * gathers every write that arrives, and is saved as one (a burst of N writes costs a few saves).
 * A group is saved all or nothing, and served only once saved:
 * - changes to one shard file only: that file is replaced (temp file + rename, the atomic step);
 * - changes to several files: a journal entry is saved (the atomic step); the files are written
 *   by a checkpoint once the writes let up, and the entries removed after them.
 * Until the saving step has succeeded nothing is served and no file holds any of it; a group
 * whose saving step fails is rejected whole, and the next group starts from what is saved.
 * While entries wait for their files, every write goes through the journal, so that entries
 * replayed in order after a crash never undo a later write. A file that fails to be rewritten
 * stays "dirty": its entries are kept, and the checkpoint is tried again after the next write.
 */
export class Writer {
  private queue: Waiting[] = [];
  private running: Promise<void> | undefined;
  /** Journal files not yet removed, oldest first. */
  private journals: string[] = [];
  private readonly dirty = new Map<string, ShardRef>();
  /** Ends the pause before a checkpoint: a write arrived, or a flush wants the files now. */
  private wake: (() => void) | undefined;
  private flushing = 0;

  constructor(
    private readonly disk: { fs: StoreFileSystem; journal: Journal; files: ShardFiles } | null,
    private readonly report: (message: string) => void,
  ) {}

  write<R>(build: (batch: WriteBatch) => R): Promise<R> {
    if (!this.disk) {
      // In memory there is nothing to wait for: the write is applied at once, in call order.
      const batch = new WriteBatch(new ChangeSet());
      try {
        const result = build(batch);
        applyAll(batch.own);
        return Promise.resolve(result);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ build, resolve: resolve as (value: unknown) => void, reject });
      this.wake?.();
      this.running ??= this.drain();
    });
  }

  /** Resolves once every write so far is saved or refused, and finishes any dirty files it can. */
  async flush(): Promise<void> {
    this.flushing++;
    try {
      this.wake?.();
      while (this.running) await this.running;
      if (this.disk && (this.dirty.size > 0 || this.journals.length > 0))
        await this.checkpoint().catch((error: Error) => this.report(error.message));
    } finally {
      this.flushing--;
    }
  }

  /** At open: the changes of journal entries a stopped process left, applied and their files rewritten. */
  async recover(entries: { file: string; changes: ChangeSet }[]): Promise<void> {
    for (const { file, changes } of entries) {
      applyAll(changes);
      this.markDirty(changes);
      this.journals.push(file);
    }
    if (entries.length > 0) await this.checkpoint();
  }

  private async drain(): Promise<void> {
    // Started on a later tick: writes asked for in the same tick join one group.
    await Promise.resolve();
    for (;;) {
      while (this.queue.length > 0 && !this.checkpointDue()) {
        const group = this.queue;
        this.queue = [];
        await this.save(group);
      }
      // Shard files are rewritten once the writes let up (or the journal has grown): under load a
      // write costs its journal entry only, and many entries' files are written together.
      if (this.dirty.size > 0 || this.journals.length > 0) {
        if (this.queue.length === 0 && this.flushing === 0) await this.pause();
        if (this.queue.length > 0 && !this.checkpointDue()) continue;
        await this.checkpoint().catch((error: Error) => this.report(error.message));
      }
      if (this.queue.length === 0) break;
    }
    this.running = undefined;
  }

  /** Waits a moment for more writes (the next requests of a burst), or until flush is asked for. */
  private pause(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, PAUSE_MS);
      this.wake = done;
    });
  }

  private checkpointDue(): boolean {
    return this.journals.length >= MAX_JOURNAL_ENTRIES || this.dirty.size >= MAX_DIRTY_FILES;
  }

  private async save(group: Waiting[]): Promise<void> {
    const changes = new ChangeSet();
    const accepted: { waiting: Waiting; result: unknown }[] = [];
    for (const waiting of group) {
      const batch = new WriteBatch(changes);
      try {
        const result = waiting.build(batch);
        changes.merge(batch.own);
        accepted.push({ waiting, result });
      } catch (error) {
        waiting.reject(error);
      }
    }
    try {
      if (changes.size > 0) await this.persist(changes);
    } catch (error) {
      for (const { waiting } of accepted) waiting.reject(error);
      return;
    }
    for (const { waiting, result } of accepted) waiting.resolve(result);
  }

  private async persist(changes: ChangeSet): Promise<void> {
    const { journal, files } = this.disk!;
    const touched = shardsOf(changes);
    if (touched.size === 1 && this.journals.length === 0 && this.dirty.size === 0) {
      const { collection, shard } = [...touched.values()][0]!;
      const file = new DurableJsonFile(files.fileOf(collection, shard), this.disk!.fs);
      try {
        await file.replace(collection.content(shard, changes.byCollection.get(collection)));
      } catch (error) {
        throw new StoreWriteError(file.file, error);
      }
      try {
        await this.disk!.fs.syncDir(path.dirname(file.file));
      } catch (error) {
        // Renamed but maybe not durable: reported as failed, so the file goes back to what is saved.
        await file.write(collection.content(shard)).catch(() => {});
        throw new StoreWriteError(file.file, error);
      }
      applyAll(changes);
      return;
    }
    try {
      this.journals.push(await journal.append(journalChanges(changes)));
    } catch (error) {
      throw new StoreWriteError(journal.dir, error);
    }
    // Saved: its files are written by the next checkpoint (see drain); a crash before that leaves
    // the entry, which the next open applies.
    applyAll(changes);
    this.markDirty(changes);
  }

  /** Rewrites every dirty shard file from what is saved, then removes the journal entries. */
  private async checkpoint(): Promise<void> {
    const { files, fs, journal } = this.disk!;
    const refs = [...this.dirty.values()];
    let current = journal.dir;
    try {
      await mapBounded(refs, FILES_IN_FLIGHT, async ({ collection, shard }) => {
        const file = files.fileOf(collection, shard);
        await new DurableJsonFile(file, fs).replace(collection.content(shard)).catch((error: unknown) => {
          current = file;
          throw error;
        });
      });
      for (const dir of new Set(refs.map(({ collection, shard }) => path.dirname(files.fileOf(collection, shard))))) {
        current = dir;
        await fs.syncDir(dir);
      }
      for (const ref of refs) this.dirty.delete(refKey(ref));
      current = journal.dir;
      await journal.remove(this.journals);
      this.journals = [];
    } catch (error) {
      throw new StoreError(
        `Saved writes are not yet in their files: writing ${current} failed: ${describeCause(error)}. They are kept in ` +
          `the journal (${journal.dir}) and finished with the next write or start; ${remedyFor(error)}.`,
        current,
      );
    }
  }

  private markDirty(changes: ChangeSet): void {
    for (const ref of shardsOf(changes).values()) this.dirty.set(refKey(ref), ref);
  }
}

function applyAll(changes: ChangeSet): void {
  for (const [collection, byKey] of changes.byCollection) collection.apply(byKey);
}

function shardsOf(changes: ChangeSet): Map<string, ShardRef> {
  const refs = new Map<string, ShardRef>();
  for (const [collection, byKey] of changes.byCollection) {
    for (const change of byKey.values()) {
      const ref = { collection, shard: collection.shardOf(change.tenantId, change.id) };
      refs.set(refKey(ref), ref);
    }
  }
  return refs;
}

function refKey({ collection, shard }: ShardRef): string {
  return `${collection.name}:${shard}`;
}

function journalChanges(changes: ChangeSet): JournalChange[] {
  const out: JournalChange[] = [];
  for (const [collection, byKey] of changes.byCollection) {
    for (const change of byKey.values()) {
      out.push({
        collection: collection.name,
        tenant_id: change.tenantId,
        id: change.id,
        ...(change.record && { record: change.record }),
      });
    }
  }
  return out;
}
