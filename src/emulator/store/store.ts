import path from 'node:path';
import { Collection, type CollectionOptions, type TenantRecord } from './collection.js';
import { DurableJsonFile, ensureDir } from './durable-file.js';
import { StoreError, corruptFile } from './errors.js';
import { acquireLock } from './lock.js';
import { adoptShards, existing, removeFiles, reshard } from './migrate.js';
import type { ApplicationRecord, ProxyRecord, ReactorRecord, ReactorResultRecord, TenantRow, TokenRecord, TransactionRecord } from './records.js';

export const STORE_FORMAT = 'svc-store';
export const STORE_VERSION = 2;
export const TOKEN_SHARDS = 2048;
/** Version 1 kept tokens in 256 shards, `tokens/00.json` .. `tokens/ff.json`. */
export const V1_TOKEN_SHARDS = 256;
export const RESULT_SHARDS = 2048;
/** Reactor results were kept in 16 shards before, `reactor-results/00.json` .. `0f.json`. */
export const OLD_RESULT_SHARDS = 16;

export interface StoreOptions {
  /** The data file (the store's manifest); collections live in a folder beside it. */
  path?: string;
  /** Keep everything in memory: nothing is read or written. */
  inMemory?: boolean;
}

interface Manifest {
  format: typeof STORE_FORMAT;
  version: number;
  created_at: string;
}

/**
 * The emulator's store: one lowdb file per collection (sharded where a collection grows large)
 * under a folder named after the data file, e.g. `.svc/data.json` + `.svc/data/applications.json`.
 * A write rewrites only its shard, so its cost does not grow with the size of the store.
 */
export class Store {
  readonly tenants: Collection<TenantRow>;
  readonly applications: Collection<ApplicationRecord>;
  readonly tokens: Collection<TokenRecord>;
  readonly transactions: Collection<TransactionRecord>;
  readonly reactors: Collection<ReactorRecord>;
  readonly proxies: Collection<ProxyRecord>;
  readonly results: Collection<ReactorResultRecord>;
  private readonly collections: Collection<TenantRecord>[] = [];
  private released = false;

  private constructor(
    /** Folder of the data file, where credentials and keys live; undefined in memory. */
    readonly dir: string | undefined,
    private readonly folder: string | undefined,
    private readonly release: () => Promise<void>,
  ) {
    this.tenants = this.define<TenantRow>('tenants');
    this.applications = this.define<ApplicationRecord>('applications', {
      indexes: { key: (app) => app.key_hash },
    });
    // Tokens are many: 2048 shards keep one write at about 50 records even at 100k tokens, a size
    // whose durable write costs no more than a write of a handful.
    this.tokens = this.define<TokenRecord>('tokens', { shards: TOKEN_SHARDS });
    this.transactions = this.define<TransactionRecord>('transactions');
    this.reactors = this.define<ReactorRecord>('reactors');
    this.proxies = this.define<ProxyRecord>('proxies', { indexes: { key: (proxy) => proxy.key_hash } });
    // Results are sharded like tokens: storing one (every async invoke, every webhook attempt) costs
    // the same however many are kept (in 16 shards, 6,000 results doubled the 202's latency).
    this.results = this.define<ReactorResultRecord>('reactor-results', { shards: RESULT_SHARDS });
  }

  static async open(options: StoreOptions): Promise<Store> {
    if (options.inMemory) return new Store(undefined, undefined, async () => {});
    const dataFile = path.resolve(options.path ?? path.join('.svc', 'data.json'));
    const dir = path.dirname(dataFile);
    await ensureDir(dir);
    const release = await acquireLock(`${dataFile}.lock`, dataFile);
    try {
      const folder = collectionsFolder(dataFile);
      const manifest = await readManifest(dataFile);
      await ensureDir(folder);
      const store = new Store(dir, folder, release);
      await store.upgrade(dataFile, manifest);
      for (const collection of store.collections) {
        const { name, shardCount } = collection;
        if (shardCount === 1) {
          await collection.load(() => store.fileOf(name, 0));
          continue;
        }
        // One listing of the folder instead of an attempt to read each of 2048 files.
        await ensureDir(path.join(folder, name));
        const files = store.shardFiles(name, shardCount);
        await collection.load((shard) => files[shard]!, new Set(await existing(files)));
      }
      // Two hex digits against three: the old layout's names never clash with the new one's.
      await adoptShards(store.results, await existing(store.shardFiles('reactor-results', OLD_RESULT_SHARDS)));
      return store;
    } catch (error) {
      await release();
      throw error;
    }
  }

  get inMemory(): boolean {
    return this.folder === undefined;
  }

  /** Waits for every pending write to reach the disk. */
  async flush(): Promise<void> {
    await Promise.all(this.collections.map((collection) => collection.flush()));
  }

  /** Flushes and releases the lock; idempotent. */
  async close(): Promise<void> {
    await this.flush();
    if (this.released) return;
    this.released = true;
    await this.release();
  }

  private define<T extends TenantRecord>(name: string, options: CollectionOptions<T> = {}): Collection<T> {
    const count = options.shards ?? 1;
    const collection = new Collection<T>(
      name,
      this.folder === undefined ? null : (shard) => new DurableJsonFile(this.fileOf(name, shard, count)),
      options,
    );
    this.collections.push(collection as unknown as Collection<TenantRecord>);
    return collection;
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
      await writeManifest(dataFile, manifest?.created_at ?? new Date().toISOString());
    }
    await removeFiles(v1Files);
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
  const manifest = await new DurableJsonFile<Manifest>(dataFile).read();
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
  await new DurableJsonFile<Manifest>(dataFile).write({ format: STORE_FORMAT, version: STORE_VERSION, created_at: createdAt });
}
