import path from 'node:path';
import { ChangeSet, WriteBatch } from './batch.js';
import type { Collection, TenantRecord } from './collection.js';
import { FILES_IN_FLIGHT, mapBounded } from './concurrency.js';
import { DurableJsonFile } from '../../lib/durable-file.js';
import { StoreError, StoreWriteError } from './errors.js';
import { describeCause, remedyFor, type StoreFileSystem } from './io.js';
import type { Journal, JournalChange } from './journal.js';
import type { QuotaGate } from './metering.js';
import { type Probe, type ShardRef, WriteFailures } from './write-failure.js';

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
 * stays "dirty": its entries are kept, and the checkpoint is tried again (backing off, see
 * WriteFailures). Once the journal holds its bound of entries, a write that would add one is
 * refused at once (503, naming the file that cannot be written), never left waiting for a disk
 * that may not come back.
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
  /** What the disk refused last, until it is written; retries wake the writer. */
  private readonly failures: WriteFailures;

  constructor(
    private readonly disk: { fs: StoreFileSystem; journal: Journal; files: ShardFiles } | null,
    report: (message: string) => void,
    /** Each write checked against the quotas before it joins its group (none: no quotas). */
    private readonly gate?: QuotaGate,
  ) {
    this.failures = new WriteFailures(() => this.kick(), report);
  }

  /** Why the store cannot write now (what `/health` says), or undefined while it can. */
  get problem(): string | undefined {
    return this.failures.describe();
  }

  write<R>(build: (batch: WriteBatch) => R): Promise<R> {
    if (!this.disk) {
      // In memory there is nothing to wait for: the write is applied at once, in call order.
      const earlier = new ChangeSet();
      const batch = new WriteBatch(earlier);
      try {
        const result = build(batch);
        this.gate?.admit(batch, earlier, this.gate.group());
        applyAll(batch.own);
        return Promise.resolve(result);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ build, resolve: resolve as (value: unknown) => void, reject });
      this.kick();
    });
  }

  /** No retry after this: the store is closing, and its lock is about to be released. */
  stop(): void {
    this.failures.stop();
  }

  /** Resolves once every write so far is saved or refused, and finishes any dirty files it can. */
  async flush(): Promise<void> {
    this.flushing++;
    try {
      this.wake?.();
      while (this.running) await this.running;
      // A failed checkpoint is reported by WriteFailures; flush asks, whatever the backoff says.
      if (this.disk && (this.dirty.size > 0 || this.journals.length > 0)) await this.checkpoint().catch(() => {});
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
    if (entries.length === 0) return;
    try {
      await this.checkpoint();
    } catch (error) {
      // The open fails: no retry may write once its lock is released.
      this.stop();
      throw error;
    }
  }

  /** Starts the writer's turn unless it runs: a write arrived, or a retry is due. */
  private kick(): void {
    this.wake?.();
    this.running ??= this.drain();
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
      if (this.dirty.size > 0 || this.journals.length > 0 || this.failures.retryDue) {
        if (this.queue.length === 0 && this.flushing === 0 && !this.failures.retryDue) await this.pause();
        if (this.queue.length > 0 && !this.checkpointDue()) continue;
        if (this.failures.retryDue) await this.recheck();
        else if (!this.failures.backingOff || this.flushing > 0) await this.checkpoint().catch(() => {});
      }
      // The journal is full and its files cannot be written: what waits cannot be saved, and is
      // told so now rather than when (if ever) the disk comes back.
      const failure = this.failures.current;
      if (failure && this.checkpointDue() && this.queue.length > 0) {
        const refusal = new StoreWriteError(failure.file, failure.cause, 'blocked');
        for (const { reject } of this.queue.splice(0)) reject(refusal);
      }
      if (this.queue.length === 0) break;
    }
    this.running = undefined;
  }

  /**
   * A failure's retry, in the writer's turn: what failed is written again. A journal entry is
   * tried as an empty one, written and removed (replayed, it would change nothing); a shard file
   * is rewritten from what is saved, with the files saved writes wait for.
   */
  private async recheck(): Promise<void> {
    const { probe } = this.failures.current!;
    const { journal } = this.disk!;
    if (probe === 'journal') {
      let entry: string;
      try {
        entry = await journal.append([]);
      } catch (error) {
        this.failures.fail({ file: journal.dir, cause: error, probe });
        return;
      }
      this.failures.succeeded((failure) => failure.probe === 'journal');
      // Left behind, the empty entry is removed with the others by the next checkpoint.
      await journal.remove([entry]).catch(() => this.journals.push(entry));
    }
    const extra = typeof probe === 'object' ? [probe] : [];
    if (this.dirty.size > 0 || this.journals.length > 0 || extra.length > 0)
      await this.checkpoint(extra).catch(() => {});
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
    const pending = this.gate?.group();
    for (const waiting of group) {
      const batch = new WriteBatch(changes);
      try {
        const result = waiting.build(batch);
        this.gate?.admit(batch, changes, pending!);
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
      const ref = [...touched.values()][0]!;
      const { collection, shard } = ref;
      const file = new DurableJsonFile(files.fileOf(collection, shard), this.disk!.fs);
      try {
        await file.replace(collection.content(shard, changes.byCollection.get(collection)));
      } catch (error) {
        throw this.refused(file.file, error, ref);
      }
      try {
        await this.disk!.fs.syncDir(path.dirname(file.file));
      } catch (error) {
        // Renamed but maybe not durable: reported as failed, so the file goes back to what is saved
        // (and if that fails too, the retry rewrites it from what is saved).
        await file.write(collection.content(shard)).catch(() => {});
        throw this.refused(file.file, error, ref);
      }
      applyAll(changes);
      this.failures.succeeded((failure) => failure.file === file.file);
      return;
    }
    try {
      this.journals.push(await journal.append(journalChanges(changes)));
    } catch (error) {
      throw this.refused(journal.dir, error, 'journal');
    }
    this.failures.succeeded((failure) => failure.probe === 'journal');
    // Saved: its files are written by the next checkpoint (see drain); a crash before that leaves
    // the entry, which the next open applies.
    applyAll(changes);
    this.markDirty(changes);
  }

  /** A write the disk refused: remembered (for `/health` and its retry), and the caller's 503. */
  private refused(file: string, cause: unknown, probe: Probe): StoreWriteError {
    this.failures.fail({ file, cause, probe });
    return new StoreWriteError(file, cause);
  }

  /**
   * Rewrites every dirty shard file (and `extra`, a file a write failed to replace) from what is
   * saved, then removes the journal entries.
   */
  private async checkpoint(extra: ShardRef[] = []): Promise<void> {
    const { files, fs, journal } = this.disk!;
    const refs = [...this.dirty.values(), ...extra.filter((ref) => !this.dirty.has(refKey(ref)))];
    const waiting = this.journals.length > 0;
    const written = new Set<string>();
    let current = journal.dir;
    try {
      await mapBounded(refs, FILES_IN_FLIGHT, async ({ collection, shard }) => {
        const file = files.fileOf(collection, shard);
        await new DurableJsonFile(file, fs).replace(collection.content(shard)).catch((error: unknown) => {
          current = file;
          throw error;
        });
        written.add(file);
      });
      for (const dir of new Set(refs.map(({ collection, shard }) => path.dirname(files.fileOf(collection, shard))))) {
        current = dir;
        await fs.syncDir(dir);
        written.add(dir);
      }
      for (const ref of refs) this.dirty.delete(refKey(ref));
      current = journal.dir;
      await journal.remove(this.journals);
      this.journals = [];
    } catch (error) {
      const message = waiting
        ? `Saved writes are not yet in their files: writing ${current} failed: ${describeCause(error)}. They are kept in ` +
          `the journal (${journal.dir}) and finished with the next write or start; ${remedyFor(error)}.`
        : `Writing ${current} failed: ${describeCause(error)}; ${remedyFor(error)}. svc tries again by itself.`;
      // A lone file's retry stays a retry of that file; files saved writes wait for are a checkpoint's.
      const probe = !waiting && this.dirty.size === 0 && extra.length === 1 ? extra[0]! : 'checkpoint';
      this.failures.fail({ file: current, cause: error, probe }, message);
      throw new StoreError(message, current);
    }
    this.failures.succeeded((failure) => failure.probe === 'checkpoint' || written.has(failure.file));
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
