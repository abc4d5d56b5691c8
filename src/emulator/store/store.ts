import { readdirSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_DATA_PATH } from '../../api/defaults.js';
import type { WriteBatch } from './batch.js';
import { ChangeSet } from './batch.js';
import { recordCheck } from './checks.js';
import { Collection, compositeKey, type CollectionOptions, type TenantRecord, type WriteFn } from './collection.js';
import { DurableJsonFile, ensureDir, isTempFile, nodeFileSystem } from '../../lib/durable-file.js';
import { StoreError, cannotWrite, corruptFile } from './errors.js';
import type { StoreFileSystem } from './io.js';
import { Journal, type JournalEntry } from './journal.js';
import { readJsonSync } from './read-json.js';
import { acquireLock } from './lock.js';
import { adoptShards, existing, removeFiles, reshard } from './migrate.js';
import type {
  ApplicationRecord,
  ProxyRecord,
  ReactorRecord,
  ReactorResultRecord,
  StoredTenant,
  TokenRecord,
  TransactionRecord,
} from './records.js';
import { Writer } from './writer.js';
import { QuotaGate, tokenWeight, transactionWeight } from './metering.js';
import { Quotas } from '../quotas.js';
import { quotaLimits } from '../../api/quotas.js';

export const STORE_FORMAT = 'svc-store';
export const STORE_VERSION = 2;
export const TOKEN_SHARDS = 2048;
/** Version 1 kept tokens in 256 shards, `tokens/00.json` .. `tokens/ff.json`. */
export const V1_TOKEN_SHARDS = 256;
export const RESULT_SHARDS = 2048;
export const TRANSACTION_SHARDS = 2048;
/** Reactor results were kept in 16 shards before, `reactor-results/00.json` .. `0f.json`. */
export const OLD_RESULT_SHARDS = 16;
export const JOURNAL_FOLDER = 'journal';

export interface StoreOptions {
  /** The data file (the store's manifest); collections live in a folder beside it. */
  path?: string;
  /** Keep everything in memory: nothing is read or written. */
  inMemory?: boolean;
  /** The file operations of every write (default node:fs); tests inject failures here. */
  fileSystem?: StoreFileSystem;
  /** Hears what goes wrong without failing a write (a file finished later); never given secrets. Problems found while opening are in `problems`. */
  report?: (message: string) => void;
  /** What the tenants' records count against (default: the default quotas, src/api/quotas.ts). */
  quotas?: Quotas;
}

interface Manifest {
  format: typeof STORE_FORMAT;
  version: number;
  created_at: string;
}

/**
 * The emulator's store: one JSON file per collection (sharded where a collection grows
 * large) under a folder named after the data file, e.g. `.svc/data.json` + `.svc/data/applications.json`.
 * A write rewrites only the shards it touches, so its cost does not grow with the size of the
 * store; a write of several files is made atomic by a journal entry saved first (see Writer).
 */
export class Store {
  readonly tenants: Collection<StoredTenant>;
  readonly applications: Collection<ApplicationRecord>;
  readonly tokens: Collection<TokenRecord>;
  readonly transactions: Collection<TransactionRecord>;
  readonly reactors: Collection<ReactorRecord>;
  readonly proxies: Collection<ProxyRecord>;
  readonly results: Collection<ReactorResultRecord>;
  /** Records found unusable while opening (kept in their files, not served), one line each. */
  readonly problems: string[] = [];
  private readonly collections = new Map<string, Collection<TenantRecord>>();
  private readonly writer: Writer;
  private released = false;

  private constructor(
    /** Folder of the data file, where credentials and keys live; undefined in memory. */
    readonly dir: string | undefined,
    private readonly folder: string | undefined,
    private readonly release: () => Promise<void>,
    fs: StoreFileSystem,
    report: (message: string) => void,
    /** What the tenants' records count against: charged as they are served, checked before a write. */
    readonly quotas: Quotas = new Quotas(quotaLimits()),
  ) {
    this.writer = new Writer(
      folder === undefined
        ? null
        : {
            fs,
            journal: new Journal(path.join(folder, JOURNAL_FOLDER), fs),
            files: { fileOf: (c, shard) => this.fileOf(c.name, shard, c.shardCount) },
          },
      report,
      new QuotaGate(quotas),
    );
    this.tenants = this.define<StoredTenant>('tenants');
    this.applications = this.define<ApplicationRecord>('applications', {
      quota: { kind: 'resources' },
      indexes: { key: (app) => app.key_hash },
    });
    // Tokens are many: 2048 shards keep one write at about 50 records even at 100k tokens, a size
    // whose durable write costs no more than a write of a handful.
    this.tokens = this.define<TokenRecord>('tokens', {
      shards: TOKEN_SHARDS,
      quota: { kind: 'tokens', weigh: tokenWeight },
    });
    // Sharded too: a transaction's create, commit or rollback rewrites one small file, however many
    // ended ones are kept (in one file, 4,000 of them tripled a create + rollback's time).
    this.transactions = this.define<TransactionRecord>('transactions', {
      shards: TRANSACTION_SHARDS,
      quota: { kind: 'transactions', weigh: transactionWeight },
    });
    this.reactors = this.define<ReactorRecord>('reactors', { quota: { kind: 'resources' } });
    this.proxies = this.define<ProxyRecord>('proxies', {
      indexes: { key: (proxy) => proxy.key_hash },
      quota: { kind: 'resources' },
    });
    // Results are sharded like tokens: storing one (every async invoke, every webhook attempt) costs
    // the same however many are kept (in 16 shards, 6,000 results doubled the 202's latency).
    this.results = this.define<ReactorResultRecord>('reactor-results', {
      shards: RESULT_SHARDS,
      quota: { kind: 'results' },
    });
  }

  static async open(options: StoreOptions): Promise<Store> {
    const report = options.report ?? (() => {});
    const fs = options.fileSystem ?? nodeFileSystem;
    if (options.inMemory) return new Store(undefined, undefined, async () => {}, fs, report, options.quotas);
    const dataFile = path.resolve(options.path ?? DEFAULT_DATA_PATH);
    const dir = path.dirname(dataFile);
    await ensureDir(dir).catch((error: unknown) => {
      throw cannotWrite(dir, error);
    });
    const release = await acquireLock(`${dataFile}.lock`, dataFile);
    try {
      const folder = collectionsFolder(dataFile);
      const manifest = await readManifest(dataFile);
      const store = new Store(dir, folder, release, fs, report, options.quotas);
      await store.prepareFolders(dataFile);
      await store.upgrade(dataFile, manifest);
      store.load();
      await store.recover();
      await store.adoptOldLayouts();
      return store;
    } catch (error) {
      await release();
      throw error;
    }
  }

  get inMemory(): boolean {
    return this.folder === undefined;
  }

  /**
   * Saves one write of any records of any collections, all or nothing (see WriteBatch): `build`
   * runs at the write's turn over the latest state and says what to change; what it returns is
   * the result, once saved. Nothing is served before it is saved; a failed save changes nothing.
   */
  write<R>(build: (batch: WriteBatch) => R): Promise<R> {
    return this.writer.write(build);
  }

  /** Waits for every pending write to reach the disk. */
  async flush(): Promise<void> {
    await this.writer.flush();
  }

  /**
   * Why the store cannot write now (the file, the cause, what to do), or undefined while it can:
   * what `/health` reports. Set by a write the disk refused, cleared once that file is written.
   */
  get writeProblem(): string | undefined {
    return this.writer.problem;
  }

  /** Flushes and releases the lock; idempotent. */
  async close(): Promise<void> {
    await this.flush();
    this.writer.stop();
    if (this.released) return;
    this.released = true;
    await this.release();
  }

  private define<T extends TenantRecord>(name: string, options: CollectionOptions<T> = {}): Collection<T> {
    const check = recordCheck(name);
    const collection = new Collection<T>(
      name,
      (build) => this.writer.write(build),
      { ...options, ...(check && { check }) },
      this.quotas,
    );
    this.collections.set(name, collection as unknown as Collection<TenantRecord>);
    return collection;
  }

  /**
   * Creates the folders and removes the temp files of writes a crash interrupted: each is a copy
   * of a write that never replaced its file, so it holds nothing that was saved.
   */
  private async prepareFolders(dataFile: string): Promise<void> {
    const folders = [this.dir!, this.folder!, this.journalDir, ...this.shardedFolders()];
    for (const folder of folders) {
      try {
        await ensureDir(folder);
        for (const name of readdirSync(folder)) if (isTempFile(name)) await removeFiles([path.join(folder, name)]);
      } catch (error) {
        if (error instanceof StoreError) throw error;
        throw cannotWrite(folder === this.dir ? dataFile : folder, error);
      }
    }
  }

  /**
   * Brings the files of an older store to the current layout, or writes a new store's manifest.
   * Version 1's token files are resharded before the manifest says 2 and removed only after: a crash
   * before leaves a version-1 store, migrated again from its untouched old files at the next open;
   * a crash after leaves old files that every open of a version-2 store removes without reading.
   */
  private async upgrade(dataFile: string, manifest: Manifest | null): Promise<void> {
    const v1Files = await existing(this.shardFiles('tokens', V1_TOKEN_SHARDS));
    // Version-1 token files without a manifest are a version-1 store that lost its manifest: taken
    // for a new store, its tokens would be removed as leftovers.
    const version = manifest?.version ?? (v1Files.length > 0 ? 1 : STORE_VERSION);
    if (version < 2) await reshard(v1Files, this.shardFiles('tokens', TOKEN_SHARDS));
    if (manifest === null || version < STORE_VERSION) {
      await writeManifest(dataFile, manifest?.created_at ?? new Date().toISOString()).catch((error: unknown) => {
        throw cannotWrite(dataFile, error);
      });
    }
    await removeFiles(v1Files);
  }

  /** Reads every collection's files; records are listed in creation order afterwards. */
  private load(): void {
    for (const collection of this.collections.values()) {
      const { name, shardCount } = collection;
      // One listing of the folder instead of an attempt to read each of 2048 files.
      const present = shardCount === 1 ? undefined : new Set(readdirSync(path.join(this.folder!, name)));
      const all: TenantRecord[] = [];
      for (let shard = 0; shard < shardCount; shard++) {
        const file = this.fileOf(name, shard, shardCount);
        if (present && !present.has(path.basename(file))) continue;
        // Merged in shard order: records created in the same millisecond always list in one order.
        const { loaded, problems } = collection.load(shard, readJsonSync(file), file);
        all.push(...loaded);
        this.problems.push(...problems);
      }
      all.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
      collection.index(all);
    }
  }

  /**
   * Moves records of an older layout into the current one, each collection's in one write; the
   * open ends with them in their new files. Results of the 16-shard layout (two hex digits against
   * three: the names never clash), and transactions of the single `transactions.json` (beside the
   * `transactions/` folder of the shards).
   */
  private async adoptOldLayouts(): Promise<void> {
    const write: WriteFn = (build) => this.write(build);
    const oldResults = await existing(this.shardFiles(this.results.name, OLD_RESULT_SHARDS));
    this.problems.push(...(await adoptShards(this.results, oldResults, write)));
    const oldTransactions = await existing([this.fileOf(this.transactions.name, 0)]);
    this.problems.push(...(await adoptShards(this.transactions, oldTransactions, write)));
    await this.flush();
  }

  /** Finishes the writes a stopped process saved in its journal but had not yet put in their files. */
  private async recover(): Promise<void> {
    const journal = new Journal(this.journalDir, nodeFileSystem);
    const entries = await journal.pending();
    const recovered = entries.map(({ file, entry }) => ({ file, changes: this.changesOf(file, entry) }));
    await this.writer.recover(recovered);
  }

  private changesOf(file: string, entry: JournalEntry): ChangeSet {
    const changes = new ChangeSet();
    for (const change of entry.changes) {
      const collection = this.collections.get(change.collection);
      if (!collection || typeof change.tenant_id !== 'string' || typeof change.id !== 'string') {
        throw corruptFile(file, `it names an unknown collection or record (${String(change.collection)})`);
      }
      changes.set(collection, compositeKey(change.tenant_id, change.id), {
        tenantId: change.tenant_id,
        id: change.id,
        record: (change.record as TenantRecord | undefined) ?? null,
      });
    }
    return changes;
  }

  private get journalDir(): string {
    return path.join(this.folder!, JOURNAL_FOLDER);
  }

  private shardedFolders(): string[] {
    return [...this.collections.values()].filter((c) => c.shardCount > 1).map((c) => path.join(this.folder!, c.name));
  }

  private shardFiles(name: string, count: number): string[] {
    return Array.from({ length: count }, (_, shard) => this.fileOf(name, shard, count));
  }

  private fileOf(name: string, shard: number, count = 1): string {
    const folder = this.folder!;
    if (count === 1) return path.join(folder, `${name}.json`);
    return path.join(folder, name, `${shardName(shard, count)}.json`);
  }
}

/**
 * A shard's number in hex, in as many digits as the highest shard needs and at least two:
 * `00` .. `0f` of 16 shards, `000` .. `7ff` of 2048. Layouts of different widths never share a name.
 */
function shardName(shard: number, count: number): string {
  const digits = Math.max(2, (count - 1).toString(16).length);
  return shard.toString(16).padStart(digits, '0');
}

function collectionsFolder(dataFile: string): string {
  const ext = path.extname(dataFile);
  const stem = path.basename(dataFile, ext);
  return path.join(path.dirname(dataFile), ext ? stem : `${stem}.d`);
}

/** Reads the manifest (null: none yet); refuses a file that is not an svc store, or of a newer svc. */
async function readManifest(dataFile: string): Promise<Manifest | null> {
  const manifest = readJsonSync(dataFile) as Manifest | null;
  if (manifest === null) return null;
  if (typeof manifest !== 'object' || manifest.format !== STORE_FORMAT) {
    throw corruptFile(dataFile, `it has no "format": "${STORE_FORMAT}"`);
  }
  if (typeof manifest.version !== 'number') throw corruptFile(dataFile, 'it has no numeric "version"');
  if (manifest.version > STORE_VERSION) {
    throw new StoreError(
      `${dataFile} was written by a newer svc (store version ${manifest.version}); upgrade svc to open it.`,
      dataFile,
    );
  }
  return manifest;
}

/** Atomic and durable: the store's version changes in one step, once the files match it. */
async function writeManifest(dataFile: string, createdAt: string): Promise<void> {
  await new DurableJsonFile<Manifest>(dataFile).write({
    format: STORE_FORMAT,
    version: STORE_VERSION,
    created_at: createdAt,
  });
}
