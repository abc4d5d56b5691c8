import path from 'node:path';
import { Collection, type CollectionOptions, type TenantRecord } from './collection.js';
import { DurableJsonFile, ensureDir } from './durable-file.js';
import { StoreError, corruptFile } from './errors.js';
import { acquireLock } from './lock.js';
import type { ApplicationRecord, ProxyRecord, ReactorRecord, ReactorResultRecord, TenantRow, TokenRecord, TransactionRecord } from './records.js';

export const STORE_FORMAT = 'svc-store';
export const STORE_VERSION = 1;
export const TOKEN_SHARDS = 256;

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
    // Tokens are many: 256 shards keep one write at a few hundred records even at 100k tokens.
    this.tokens = this.define<TokenRecord>('tokens', { shards: TOKEN_SHARDS });
    this.transactions = this.define<TransactionRecord>('transactions');
    this.reactors = this.define<ReactorRecord>('reactors');
    this.proxies = this.define<ProxyRecord>('proxies', { indexes: { key: (proxy) => proxy.key_hash } });
    this.results = this.define<ReactorResultRecord>('reactor-results', { shards: 16 });
  }

  static async open(options: StoreOptions): Promise<Store> {
    if (options.inMemory) return new Store(undefined, undefined, async () => {});
    const dataFile = path.resolve(options.path ?? path.join('.svc', 'data.json'));
    const dir = path.dirname(dataFile);
    await ensureDir(dir);
    const release = await acquireLock(`${dataFile}.lock`, dataFile);
    try {
      const folder = collectionsFolder(dataFile);
      await openManifest(dataFile);
      await ensureDir(folder);
      const store = new Store(dir, folder, release);
      for (const collection of store.collections) {
        if (collection.shardCount > 1) await ensureDir(path.join(folder, collection.name));
        await collection.load((shard) => store.fileOf(collection.name, shard, collection.shardCount));
      }
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

  private fileOf(name: string, shard: number, count = 1): string {
    const folder = this.folder!;
    if (count === 1) return path.join(folder, `${name}.json`);
    return path.join(folder, name, `${shard.toString(16).padStart(2, '0')}.json`);
  }
}

function collectionsFolder(dataFile: string): string {
  const ext = path.extname(dataFile);
  const stem = path.basename(dataFile, ext);
  return path.join(path.dirname(dataFile), ext ? stem : `${stem}.d`);
}

/** Reads the manifest, or writes it for a new store; refuses a file that is not an svc store. */
async function openManifest(dataFile: string): Promise<void> {
  const adapter = new DurableJsonFile<Manifest>(dataFile);
  const manifest = await adapter.read();
  if (manifest === null) {
    await adapter.write({ format: STORE_FORMAT, version: STORE_VERSION, created_at: new Date().toISOString() });
    return;
  }
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
}
