import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { shardIndex, type ShardFile, type TenantRecord } from '../../../src/emulator/store/collection.js';
import { mapBounded } from '../../../src/emulator/store/concurrency.js';
import { StoreError } from '../../../src/emulator/store/errors.js';
import type {
  ApplicationRecord,
  ReactorResultRecord,
  StoredTenant,
  TokenRecord,
} from '../../../src/emulator/store/records.js';
import {
  OLD_RESULT_SHARDS,
  RESULT_SHARDS,
  STORE_FORMAT,
  STORE_VERSION,
  Store,
  TOKEN_SHARDS,
  V1_TOKEN_SHARDS,
} from '../../../src/emulator/store/store.js';
import { FaultyFileSystem } from '../../helpers/faults.js';
import { tempDir } from '../../helpers/temp.js';

const TENANT_A = 'tenant-a';
const TENANT_B = 'tenant-b';

function application(tenantId: string, id: string, overrides: Partial<ApplicationRecord> = {}): ApplicationRecord {
  return {
    id,
    tenant_id: tenantId,
    name: `app ${id}`,
    type: 'private',
    permissions: ['token:read'],
    rules: [],
    created_at: new Date(Date.UTC(2024, 0, 1, 0, 0, Number(id.replace(/\D/g, '') || 0))).toISOString(),
    key_hash: `hash-${tenantId}-${id}`,
    ...overrides,
  };
}

function tenant(id: string): StoredTenant {
  return { id, tenant_id: id, name: `tenant ${id}`, created_at: '2024-01-01T00:00:00.000Z' };
}

function token(tenantId: string, i: number, overrides: Partial<TokenRecord> = {}): TokenRecord {
  return {
    id: `t${i}`,
    tenant_id: tenantId,
    type: 'token',
    containers: ['/general/high/'],
    metadata: { n: String(i) },
    created_at: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
    expires_at: null,
    secret: { iv: `iv${i}`, tag: `tag${i}`, ct: `ct${i}` },
    ...overrides,
  };
}

/** Tokens of two tenants, interleaved, in creation order. */
function tokens(count: number): TokenRecord[] {
  return Array.from({ length: count }, (_, i) => token(i % 2 === 0 ? TENANT_A : TENANT_B, i));
}

function result(tenantId: string, id: string): ReactorResultRecord {
  return {
    id,
    tenant_id: tenantId,
    reactor_id: 'r1',
    status: 'pending',
    started_at: '2024-01-01T00:00:00.000Z',
    created_at: '2024-01-01T00:00:00.000Z',
    callback_url: 'http://127.0.0.1:1/callback',
    delivery: { status: 'pending', attempts: 0, last_status: null, event_id: `event-${id}` },
  };
}

async function openStore(dataFile: string): Promise<Store> {
  const store = await Store.open({ path: dataFile });
  onTestFinished(() => store.close());
  return store;
}

async function readJson(file: string): Promise<unknown> {
  return JSON.parse(await readFile(file, 'utf8')) as unknown;
}

async function mode(file: string): Promise<number> {
  return (await stat(file)).mode & 0o777;
}

/** Store.open's rejection, checked to be a StoreError. */
async function openError(dataFile: string): Promise<StoreError> {
  const error: unknown = await Store.open({ path: dataFile }).then(
    async (store) => {
      await store.close();
      throw new Error('Store.open should have rejected');
    },
    (rejection: unknown) => rejection,
  );
  expect(error).toBeInstanceOf(StoreError);
  return error as StoreError;
}

describe('Store on disk', () => {
  it('writes the manifest and a collections folder beside it, owner-only', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    const store = await openStore(dataFile);
    await store.applications.put(application(TENANT_A, 'a1'));

    const manifest = await readJson(dataFile);
    expect(manifest).toMatchObject({ format: STORE_FORMAT, version: STORE_VERSION });
    expect(STORE_FORMAT).toBe('svc-store');
    expect(STORE_VERSION).toBe(2);
    expect(store.dir).toBe(dir);
    expect(store.inMemory).toBe(false);

    expect((await stat(path.join(dir, 'data'))).isDirectory()).toBe(true);
    expect(await mode(path.join(dir, 'data'))).toBe(0o700);
    expect(await mode(dataFile)).toBe(0o600);
    expect(await mode(path.join(dir, 'data', 'applications.json'))).toBe(0o600);
    expect(await mode(`${dataFile}.lock`)).toBe(0o600);
  });

  it('creates missing parent folders with mode 0700', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, '.svc', 'data.json');
    await openStore(dataFile);
    expect(await mode(path.join(dir, '.svc'))).toBe(0o700);
    expect(await mode(path.join(dir, '.svc', 'data'))).toBe(0o700);
    expect(await mode(dataFile)).toBe(0o600);
  });

  it('uses a `<name>.d` folder when the data file has no extension', async () => {
    const dir = await tempDir();
    const store = await openStore(path.join(dir, 'state'));
    await store.tenants.put(tenant(TENANT_A));
    expect(await readJson(path.join(dir, 'state'))).toMatchObject({ format: 'svc-store' });
    expect(await readdir(path.join(dir, 'state.d'))).toContain('tenants.json');
  });

  it('keeps puts and deletes across close and reopen', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    const first = await Store.open({ path: dataFile });
    await first.tenants.put(tenant(TENANT_A));
    await first.tenants.put(tenant(TENANT_B));
    // Created out of id order, and interleaved across tenants: creation order is what counts.
    const apps = [
      application(TENANT_A, 'a3', { created_at: '2024-01-01T00:00:01.000Z' }),
      application(TENANT_B, 'b1', { created_at: '2024-01-01T00:00:02.000Z' }),
      application(TENANT_A, 'a1', { created_at: '2024-01-01T00:00:03.000Z' }),
      application(TENANT_A, 'a2', {
        created_at: '2024-01-01T00:00:04.000Z',
        rules: [{ priority: 1, container: '/pci/', transform: 'mask', permissions: ['token:read'] }],
      }),
      application(TENANT_B, 'b2', { created_at: '2024-01-01T00:00:05.000Z' }),
    ];
    for (const app of apps) await first.applications.put(app);
    expect(await first.applications.delete(TENANT_A, 'a1')).toBe(true);
    expect(await first.applications.delete(TENANT_A, 'missing')).toBe(false);
    await first.close();

    const second = await openStore(dataFile);
    expect(second.tenants.get(TENANT_A, TENANT_A)).toEqual(tenant(TENANT_A));
    expect(second.tenants.get(TENANT_B, TENANT_B)).toEqual(tenant(TENANT_B));
    expect(second.applications.list(TENANT_A).map((app) => app.id)).toEqual(['a3', 'a2']);
    expect(second.applications.list(TENANT_B).map((app) => app.id)).toEqual(['b1', 'b2']);
    expect(second.applications.get(TENANT_A, 'a2')).toEqual(apps[3]);
    expect(second.applications.get(TENANT_A, 'a1')).toBeUndefined();
    expect(second.applications.findBy('key', `hash-${TENANT_B}-b2`)).toEqual(apps[4]);
    expect(second.applications.findBy('key', `hash-${TENANT_A}-a1`)).toBeUndefined();
    expect(second.applications.findBy('key', 'no-such-hash')).toBeUndefined();
    expect([...second.applications.everything()]).toHaveLength(4);

    const onDisk = (await readJson(path.join(dir, 'data', 'applications.json'))) as ShardFile<ApplicationRecord>;
    expect(onDisk.records.map((app) => app.id).sort()).toEqual(['a2', 'a3', 'b1', 'b2']);
  });

  it('replaces a record put again under the same id, and re-indexes its key', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    const first = await Store.open({ path: dataFile });
    await first.applications.put(application(TENANT_A, 'a1', { key_hash: 'old' }));
    await first.applications.put(application(TENANT_A, 'a1', { key_hash: 'new', name: 'renamed' }));
    expect(first.applications.findBy('key', 'old')).toBeUndefined();
    expect(first.applications.findBy('key', 'new')?.name).toBe('renamed');
    await first.close();

    const second = await openStore(dataFile);
    expect(second.applications.list(TENANT_A)).toHaveLength(1);
    expect(second.applications.get(TENANT_A, 'a1')?.name).toBe('renamed');
    expect(second.applications.findBy('key', 'old')).toBeUndefined();
    expect(second.applications.findBy('key', 'new')?.id).toBe('a1');
  });

  it('scopes reads to a tenant, and lets two tenants use the same id', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    const first = await Store.open({ path: dataFile });
    await first.applications.put(application(TENANT_A, 'only-a'));
    await first.applications.put(application(TENANT_A, 'same', { name: 'of A', key_hash: 'hash-a' }));
    await first.applications.put(application(TENANT_B, 'same', { name: 'of B', key_hash: 'hash-b' }));

    const expectScoped = (store: Store) => {
      expect(store.applications.get(TENANT_B, 'only-a')).toBeUndefined();
      expect(store.applications.get('tenant-c', 'same')).toBeUndefined();
      expect(store.applications.get(TENANT_A, 'same')?.name).toBe('of A');
      expect(store.applications.get(TENANT_B, 'same')?.name).toBe('of B');
      expect(store.applications.findBy('key', 'hash-a')?.tenant_id).toBe(TENANT_A);
      expect(store.applications.findBy('key', 'hash-b')?.tenant_id).toBe(TENANT_B);
      expect(
        store.applications
          .list(TENANT_A)
          .map((app) => app.id)
          .sort(),
      ).toEqual(['only-a', 'same']);
      expect(store.applications.list(TENANT_B).map((app) => `${app.tenant_id}/${app.id}`)).toEqual([
        `${TENANT_B}/same`,
      ]);
      expect(store.applications.list('tenant-c')).toEqual([]);
    };
    expectScoped(first);
    await first.close();
    const second = await openStore(dataFile);
    expectScoped(second);

    // Deleting one tenant's record leaves the other tenant's record of the same id alone.
    expect(await second.applications.delete(TENANT_B, 'same')).toBe(true);
    expect(second.applications.get(TENANT_A, 'same')?.name).toBe('of A');
    expect(second.applications.findBy('key', 'hash-a')?.id).toBe('same');
    expect(await second.applications.delete(TENANT_B, 'only-a')).toBe(false);
    expect(second.applications.get(TENANT_A, 'only-a')).toBeDefined();
  });
});

describe('Store refusing files it cannot use', () => {
  const RECOVERY = /restore it from a backup, or move it aside/;

  it('rejects a collection file that is not JSON, and leaves it untouched', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    await (await Store.open({ path: dataFile })).close();
    const file = path.join(dir, 'data', 'applications.json');
    await writeFile(file, '{not json');

    const error = await openError(dataFile);
    expect(error.message).toContain(file);
    expect(error.message).toMatch(RECOVERY);
    expect(error.file).toBe(file);
    expect(await readFile(file, 'utf8')).toBe('{not json');
  });

  it('rejects a collection file without a records array, and leaves it untouched', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    await (await Store.open({ path: dataFile })).close();
    const file = path.join(dir, 'data', 'tenants.json');
    const content = '{"version":1,"rows":[]}';
    await writeFile(file, content);

    const error = await openError(dataFile);
    expect(error.message).toContain(file);
    expect(error.message).toContain('"records" array');
    expect(error.message).toMatch(RECOVERY);
    expect(await readFile(file, 'utf8')).toBe(content);
  });

  it('rejects a manifest that is JSON but not an svc store, and leaves it untouched', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    await writeFile(dataFile, '{"hello":1}');

    const error = await openError(dataFile);
    expect(error.message).toContain(dataFile);
    expect(error.message).toContain('"format": "svc-store"');
    expect(error.message).toMatch(RECOVERY);
    expect(await readFile(dataFile, 'utf8')).toBe('{"hello":1}');
  });

  it('rejects a manifest that is not JSON, and leaves it untouched', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    await writeFile(dataFile, 'hello');

    const error = await openError(dataFile);
    expect(error.message).toContain(dataFile);
    expect(error.message).toMatch(RECOVERY);
    expect(await readFile(dataFile, 'utf8')).toBe('hello');
  });

  it('rejects a store written by a newer svc', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    const content = JSON.stringify({
      format: 'svc-store',
      version: STORE_VERSION + 1,
      created_at: '2030-01-01T00:00:00.000Z',
    });
    await writeFile(dataFile, content);

    const error = await openError(dataFile);
    expect(error.message).toContain(dataFile);
    expect(error.message).toContain('newer svc');
    expect(error.message).toContain(`store version ${STORE_VERSION + 1}`);
    expect(await readFile(dataFile, 'utf8')).toBe(content);
  });

  it('releases the lock when opening fails, so a fixed store opens', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    await (await Store.open({ path: dataFile })).close();
    const file = path.join(dir, 'data', 'applications.json');
    await writeFile(file, '{not json');

    await openError(dataFile);
    await expect(stat(`${dataFile}.lock`)).rejects.toMatchObject({ code: 'ENOENT' });
    await writeFile(file, '{"version":1,"records":[]}');
    const store = await openStore(dataFile);
    expect(store.applications.list(TENANT_A)).toEqual([]);
  });
});

describe('Store lock', () => {
  it('holds the current pid in the lock file while open, and removes it on close', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    const store = await Store.open({ path: dataFile });
    expect(await lockPid(`${dataFile}.lock`)).toBe(process.pid);
    await store.close();
    await expect(stat(`${dataFile}.lock`)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses to open a data path twice while it is open, and opens it again after close', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    const first = await Store.open({ path: dataFile });
    await first.tenants.put(tenant(TENANT_A));

    const error = await openError(dataFile);
    expect(error.message).toContain(dataFile);
    expect(error.message).toContain('another svc serve');
    expect(error.message).toContain(`pid ${process.pid}`);
    // The refused open must leave the first store's lock in place.
    expect(await lockPid(`${dataFile}.lock`)).toBe(process.pid);
    await expect(Store.open({ path: path.join(dir, '.', 'data.json') })).rejects.toBeInstanceOf(StoreError);

    await first.close();
    const second = await openStore(dataFile);
    expect(second.tenants.get(TENANT_A, TENANT_A)).toBeDefined();
  });

  it('refuses a data path locked by another live process, then opens once it is free', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    const lockFile = `${dataFile}.lock`;
    const other = await liveProcess();
    await writeFile(lockFile, String(other));

    const error = await openError(dataFile);
    expect(error.message).toContain(dataFile);
    expect(error.message).toContain('another svc serve');
    expect(error.message).toContain(`pid ${other}`);
    expect(error.file).toBe(lockFile);
    expect(await readFile(lockFile, 'utf8')).toBe(String(other));

    await writeFile(lockFile, '999999');
    const store = await openStore(dataFile);
    expect(await lockPid(lockFile)).toBe(process.pid);
    await store.applications.put(application(TENANT_A, 'a1'));
    await store.close();
    const again = await openStore(dataFile);
    expect(again.applications.get(TENANT_A, 'a1')).toBeDefined();
  });

  it('takes over a stale lock left by a process that is gone', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    await writeFile(`${dataFile}.lock`, '999999');
    const store = await openStore(dataFile);
    expect(await lockPid(`${dataFile}.lock`)).toBe(process.pid);
    await store.tenants.put(tenant(TENANT_A));
    expect(store.tenants.list(TENANT_A)).toHaveLength(1);
  });

  it('takes over a lock whose live pid is another program (a reboot reused it), in the old and the current format', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    const lockFile = `${dataFile}.lock`;
    const other = await liveProcess(['sleep', '60']);
    await writeFile(lockFile, String(other));
    await (await Store.open({ path: dataFile })).close();

    // The current format records the process's start: the same pid with another start is not the holder.
    await writeFile(lockFile, JSON.stringify({ pid: other, start: '1' }));
    const store = await openStore(dataFile);
    expect(await lockPid(lockFile)).toBe(process.pid);
    await store.close();
  });

  it.skipIf(!existsSync('/proc/self/stat'))(
    'refuses a lock in the current format whose pid is the very process that wrote it (needs /proc)',
    async () => {
      const dir = await tempDir();
      const dataFile = path.join(dir, 'data.json');
      const lockFile = `${dataFile}.lock`;
      const other = await liveProcess(['sleep', '60']);
      const stat = await readFile(`/proc/${other}/stat`, 'utf8');
      const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
      await writeFile(lockFile, JSON.stringify({ pid: other, start }));

      const error = await openError(dataFile);
      expect(error.message).toContain(`pid ${other}`);
      expect(error.message).toContain(`if pid ${other} is no svc, remove ${lockFile}`);
    },
  );

  it('takes over a lock file that holds no pid', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    await writeFile(`${dataFile}.lock`, '');
    await openStore(dataFile);
    expect(await lockPid(`${dataFile}.lock`)).toBe(process.pid);
  });

  it('close is idempotent and keeps the lock of a later opener', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    const first = await Store.open({ path: dataFile });
    await first.close();
    const second = await openStore(dataFile);
    await first.close();
    // The second close of the first store must not release the second store's lock.
    expect(await lockPid(`${dataFile}.lock`)).toBe(process.pid);
    expect(second.inMemory).toBe(false);
  });
});

/** The pid a lock file names. */
async function lockPid(file: string): Promise<number> {
  return (JSON.parse(await readFile(file, 'utf8')) as { pid: number }).pid;
}

/** The pid of a child process (node, unless another program is given) that stays alive until the test ends. */
async function liveProcess(
  command: string[] = [process.execPath, '-e', 'setTimeout(() => {}, 60000)'],
): Promise<number> {
  const child = spawn(command[0]!, command.slice(1), { stdio: 'ignore' });
  const pid = await new Promise<number>((resolve, reject) => {
    child.once('spawn', () => resolve(child.pid!));
    child.once('error', reject);
  });
  onTestFinished(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill();
    await exited;
  });
  return pid;
}

describe('Store flush and close', () => {
  it('flush and close wait for writes that were not awaited', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    const store = await Store.open({ path: dataFile });
    const file = path.join(dir, 'data', 'applications.json');
    for (let i = 0; i < 10; i++) void store.applications.put(application(TENANT_A, `a${i}`));
    await store.flush();
    const flushed = (await readJson(file)) as ShardFile<ApplicationRecord>;
    expect(flushed.records).toHaveLength(10);

    for (let i = 10; i < 20; i++) void store.applications.put(application(TENANT_A, `a${i}`));
    void store.applications.delete(TENANT_A, 'a0');
    await store.close();
    const closed = (await readJson(file)) as ShardFile<ApplicationRecord>;
    expect(closed.records).toHaveLength(19);
    expect(closed.records.some((app) => app.id === 'a0')).toBe(false);
    await expect(store.close()).resolves.toBeUndefined();
    await expect(stat(`${dataFile}.lock`)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('Store in memory', () => {
  it('writes no files and still answers get, list and findBy', async () => {
    const dir = await tempDir();
    const store = await Store.open({ inMemory: true, path: path.join(dir, 'data.json') });
    expect(store.inMemory).toBe(true);
    expect(store.dir).toBeUndefined();
    await store.tenants.put(tenant(TENANT_A));
    await store.applications.put(application(TENANT_A, 'a1'));
    await store.applications.put(application(TENANT_A, 'a2'));
    expect(await store.applications.delete(TENANT_A, 'a1')).toBe(true);
    expect(store.tenants.get(TENANT_A, TENANT_A)?.name).toBe(`tenant ${TENANT_A}`);
    expect(store.applications.list(TENANT_A).map((app) => app.id)).toEqual(['a2']);
    expect(store.applications.findBy('key', `hash-${TENANT_A}-a2`)?.id).toBe('a2');
    await store.flush();
    await store.close();
    await store.close();
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('Store token shards', () => {
  const V1_CREATED_AT = '2023-06-01T00:00:00.000Z';
  const V1_NAME = /^[0-9a-f]{2}\.json$/;

  function shardFileName(record: TenantRecord, count: number, digits: number): string {
    return `${shardIndex(record.tenant_id, record.id, count).toString(16).padStart(digits, '0')}.json`;
  }

  /** Writes records into shard files as a store of `count` shards places them; returns the files. */
  async function writeShards(
    folder: string,
    records: TenantRecord[],
    count: number,
    digits: number,
  ): Promise<string[]> {
    await mkdir(folder, { recursive: true, mode: 0o700 });
    const byFile = new Map<string, TenantRecord[]>();
    for (const record of records) {
      const file = path.join(folder, shardFileName(record, count, digits));
      byFile.set(file, [...(byFile.get(file) ?? []), record]);
    }
    for (const [file, inFile] of byFile) await writeFile(file, JSON.stringify({ version: 1, records: inFile }));
    return [...byFile.keys()];
  }

  /** A store as svc with store version 1 left it: tokens in 256 two-hex-digit shard files. */
  async function writeV1Store(dir: string, records: TokenRecord[]): Promise<string> {
    const dataFile = path.join(dir, 'data.json');
    // 0644, unlike anything the store writes: the manifest must come out rewritten, 0600.
    await writeFile(dataFile, JSON.stringify({ format: STORE_FORMAT, version: 1, created_at: V1_CREATED_AT }), {
      mode: 0o644,
    });
    const files = await writeShards(path.join(dir, 'data', 'tokens'), records, V1_TOKEN_SHARDS, 2);
    expect(files.length).toBeGreaterThan(1);
    return dataFile;
  }

  /** Both tenants list exactly these tokens, in this order. */
  function expectTokens(store: Store, expected: TokenRecord[]): void {
    for (const tenantId of [TENANT_A, TENANT_B]) {
      expect(store.tokens.list(tenantId)).toEqual(expected.filter((record) => record.tenant_id === tenantId));
    }
  }

  /**
   * The tokens folder holds the current layout and nothing else: each record in the three-hex-digit
   * file of its shard, owner-only, and no file for a shard without records.
   */
  async function expectCurrentLayout(folder: string, expected: TokenRecord[]): Promise<void> {
    const byName = new Map<string, string[]>();
    for (const record of expected) {
      const name = shardFileName(record, TOKEN_SHARDS, 3);
      byName.set(name, [...(byName.get(name) ?? []), `${record.tenant_id}/${record.id}`]);
    }
    const names = (await readdir(folder)).sort();
    expect(names.filter((name) => V1_NAME.test(name))).toEqual([]);
    expect(names).toEqual([...byName.keys()].sort());
    for (const name of names) {
      const file = path.join(folder, name);
      const content = (await readJson(file)) as ShardFile<TokenRecord>;
      expect(content.records.map((record) => `${record.tenant_id}/${record.id}`).sort(), name).toEqual(
        byName.get(name)!.sort(),
      );
      expect(await mode(file), name).toBe(0o600);
    }
  }

  it('writes tokens to three-hex-digit shard files, none for an empty shard, and reads them all back', async () => {
    expect(TOKEN_SHARDS).toBe(2048);
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    const records = tokens(300);
    const first = await Store.open({ path: dataFile });
    await Promise.all(records.map((record) => first.tokens.put(record)));
    const pending = result(TENANT_A, 'res1');
    await first.results.put(pending);
    await first.close();

    const folder = path.join(dir, 'data', 'tokens');
    expect(await mode(folder)).toBe(0o700);
    await expectCurrentLayout(folder, records);
    // Reactor results are sharded as tokens are, named with three hex digits.
    expect(await readdir(path.join(dir, 'data', 'reactor-results'))).toEqual([
      shardFileName(pending, RESULT_SHARDS, 3),
    ]);

    const second = await openStore(dataFile);
    expectTokens(second, records);
    expect(second.results.get(TENANT_A, 'res1')).toEqual(pending);
  });

  it('migrates a version-1 store: every token into its new shard file, manifest version 2, old files gone', async () => {
    const dir = await tempDir();
    const records = tokens(500);
    const dataFile = await writeV1Store(dir, records);
    // A reactor result's two-hex-digit file is no leftover of the token layout: it is moved, not lost.
    const pending = result(TENANT_B, 'res1');
    await writeShards(path.join(dir, 'data', 'reactor-results'), [pending], OLD_RESULT_SHARDS, 2);

    const store = await openStore(dataFile);
    expectTokens(store, records);
    expect(store.results.get(TENANT_B, 'res1')).toEqual(pending);
    expect(await readJson(dataFile)).toEqual({ format: STORE_FORMAT, version: 2, created_at: V1_CREATED_AT });
    expect(await mode(dataFile)).toBe(0o600);
    const folder = path.join(dir, 'data', 'tokens');
    await expectCurrentLayout(folder, records);
    expect(await readdir(path.join(dir, 'data', 'reactor-results'))).toEqual([
      shardFileName(pending, RESULT_SHARDS, 3),
    ]);

    // Writes after the migration go to the new layout, and everything reads back after reopening.
    const added = token(TENANT_A, 500);
    await store.tokens.put(added);
    await store.close();
    await expectCurrentLayout(folder, [...records, added]);
    expectTokens(await openStore(dataFile), [...records, added]);
  });

  it('redoes a migration interrupted before the manifest said 2, from the old files alone', async () => {
    const dir = await tempDir();
    const records = tokens(200);
    const dataFile = await writeV1Store(dir, records);
    // What a crashed run can leave when svc 1 changed the old files afterwards: a stale copy of a
    // token, and a token since deleted, in a shard the old files fill; a file for a shard they leave empty.
    const folder = path.join(dir, 'data', 'tokens');
    const changed = records[0]!;
    const filled = path.join(folder, shardFileName(changed, TOKEN_SHARDS, 3));
    const stale = { ...changed, metadata: { stale: 'yes' } };
    await writeFile(filled, JSON.stringify({ version: 1, records: [stale, token(TENANT_A, 9001)] }));
    const used = new Set(records.map((record) => shardIndex(record.tenant_id, record.id, TOKEN_SHARDS)));
    const emptyShard = Array.from({ length: TOKEN_SHARDS }, (_, shard) => shard).find((shard) => !used.has(shard))!;
    const orphan = path.join(folder, `${emptyShard.toString(16).padStart(3, '0')}.json`);
    await writeFile(orphan, JSON.stringify({ version: 1, records: [token(TENANT_B, 9002)] }));

    const store = await openStore(dataFile);
    expect(store.tokens.get(TENANT_A, changed.id)).toEqual(changed);
    expect(store.tokens.get(TENANT_A, 't9001')).toBeUndefined();
    expect(store.tokens.get(TENANT_B, 't9002')).toBeUndefined();
    expectTokens(store, records);
    expect(await readJson(dataFile)).toMatchObject({ version: 2 });
    await expectCurrentLayout(folder, records);
    await expect(stat(orphan)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('opens a version-2 store with leftover two-hex-digit token files without reading them, and removes them', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    const records = tokens(100);
    const first = await Store.open({ path: dataFile });
    for (const record of records) await first.tokens.put(record);
    const pending = result(TENANT_A, 'res1');
    await first.results.put(pending);
    await first.close();
    // As a crash after the manifest said 2 leaves them: old copies, here of a changed and a deleted token.
    const folder = path.join(dir, 'data', 'tokens');
    const changed = records[3]!;
    const leftovers = await writeShards(
      folder,
      [{ ...changed, metadata: { stale: 'yes' } }, token(TENANT_A, 9001)],
      V1_TOKEN_SHARDS,
      2,
    );

    const store = await openStore(dataFile);
    expect(store.tokens.get(changed.tenant_id, changed.id)).toEqual(changed);
    expect(store.tokens.get(TENANT_A, 't9001')).toBeUndefined();
    expectTokens(store, records);
    for (const file of leftovers) await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
    await expectCurrentLayout(folder, records);
    expect(await readdir(path.join(dir, 'data', 'reactor-results'))).toEqual([
      shardFileName(pending, RESULT_SHARDS, 3),
    ]);
    expect(store.results.get(TENANT_A, 'res1')).toEqual(pending);
  });

  it('keeps version 1 and every old file when a migration fails part way, and completes it at the next open', async () => {
    const dir = await tempDir();
    const records = tokens(300);
    const dataFile = await writeV1Store(dir, records);
    const folder = path.join(dir, 'data', 'tokens');
    const v1Files = (await readdir(folder)).sort();
    // A folder where one new shard file must go: its write fails after others have succeeded.
    const blocked = path.join(folder, shardFileName(records[150]!, TOKEN_SHARDS, 3));
    await mkdir(blocked);

    await expect(Store.open({ path: dataFile })).rejects.toThrow();
    expect(await readJson(dataFile)).toEqual({ format: STORE_FORMAT, version: 1, created_at: V1_CREATED_AT });
    const after = await readdir(folder);
    expect(after.filter((name) => V1_NAME.test(name)).sort()).toEqual(v1Files);
    expect(after.length).toBeGreaterThan(v1Files.length + 1);

    await rm(blocked, { recursive: true });
    const store = await openStore(dataFile);
    expectTokens(store, records);
    expect(await readJson(dataFile)).toMatchObject({ version: 2 });
    await expectCurrentLayout(folder, records);
  });

  it('leaves a version-1 store untouched when one of its token files is damaged, and migrates it once fixed', async () => {
    const dir = await tempDir();
    const records = tokens(60);
    const dataFile = await writeV1Store(dir, records);
    const folder = path.join(dir, 'data', 'tokens');
    const damaged = path.join(folder, shardFileName(records[0]!, V1_TOKEN_SHARDS, 2));
    await writeFile(damaged, '{not json');
    const snapshot = async () => ({
      manifest: await readFile(dataFile, 'utf8'),
      files: await Promise.all(
        (await readdir(folder)).sort().map(async (name) => [name, await readFile(path.join(folder, name), 'utf8')]),
      ),
    });
    const before = await snapshot();

    const error = await openError(dataFile);
    expect(error.file).toBe(damaged);
    expect(error.message).toContain(damaged);
    expect(await snapshot()).toEqual(before);

    await writeV1Store(dir, records);
    const store = await openStore(dataFile);
    expectTokens(store, records);
    await expectCurrentLayout(folder, records);
  });

  it('migrates version-1 token files found without a manifest instead of removing them', async () => {
    const dir = await tempDir();
    const records = tokens(40);
    const dataFile = await writeV1Store(dir, records);
    await rm(dataFile);

    const store = await openStore(dataFile);
    expectTokens(store, records);
    expect(await readJson(dataFile)).toMatchObject({ format: STORE_FORMAT, version: 2 });
    await expectCurrentLayout(path.join(dir, 'data', 'tokens'), records);
  });

  it('refuses a damaged three-hex-digit token file, naming it, and releases the lock', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    const records = tokens(100);
    const first = await Store.open({ path: dataFile });
    await Promise.all(records.map((record) => first.tokens.put(record)));
    await first.close();
    const damaged = path.join(dir, 'data', 'tokens', shardFileName(records[57]!, TOKEN_SHARDS, 3));
    const content = await readFile(damaged, 'utf8');
    await writeFile(damaged, '{"version":1}');

    const error = await openError(dataFile);
    expect(error.file).toBe(damaged);
    expect(error.message).toContain('"records" array');
    await writeFile(damaged, content);
    expectTokens(await openStore(dataFile), records);
  });

  /** Results of both tenants, interleaved, in creation order. */
  function results(count: number, from = 0): ReactorResultRecord[] {
    return Array.from({ length: count }, (_, i) => ({
      ...result(i % 2 === 0 ? TENANT_A : TENANT_B, `res${from + i}`),
      created_at: new Date(Date.UTC(2024, 0, 1) + (from + i) * 1000).toISOString(),
    }));
  }

  it('keeps storing a result as cheap with thousands kept: each shard file holds a handful', async () => {
    expect(RESULT_SHARDS).toBe(2048);
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    const store = await openStore(dataFile);
    const kept = results(3000);
    await Promise.all(kept.map((record) => store.results.put(record)));
    // Saved writes may wait in the journal: the shard files are read once they are written.
    await store.flush();
    const folder = path.join(dir, 'data', 'reactor-results');
    let largest = 0;
    for (const name of await readdir(folder)) {
      largest = Math.max(
        largest,
        ((await readJson(path.join(folder, name))) as ShardFile<ReactorResultRecord>).records.length,
      );
    }
    // 3000 over 2048 shards: about 1.5 a file. In 16 shards a write of one rewrote some 190.
    expect(largest).toBeLessThanOrEqual(12);
  });

  it('moves results from the old 16-shard layout into the current one, then removes the old files', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    await (await Store.open({ path: dataFile })).close();
    const folder = path.join(dir, 'data', 'reactor-results');
    const old = results(200);
    const oldFiles = await writeShards(folder, old, OLD_RESULT_SHARDS, 2);
    expect(oldFiles.length).toBe(OLD_RESULT_SHARDS);

    const store = await Store.open({ path: dataFile });
    for (const tenantId of [TENANT_A, TENANT_B])
      expect(store.results.list(tenantId)).toEqual(old.filter((record) => record.tenant_id === tenantId));
    const names = (await readdir(folder)).sort();
    expect(names.filter((name) => /^[0-9a-f]{2}\.json$/.test(name))).toEqual([]);
    expect(names).toEqual([...new Set(old.map((record) => shardFileName(record, RESULT_SHARDS, 3)))].sort());
    await store.close();
    const reopened = await openStore(dataFile);
    expect(reopened.results.list(TENANT_A)).toEqual(old.filter((record) => record.tenant_id === TENANT_A));
  });

  it('moves old result files again after a crash part way, turning back no record the new layout holds', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    const old = results(50);
    // As a crash after the move, before every old file was removed: the new layout has them all,
    // one since changed (its delivery ended), and an old file still holds the stale copy.
    const first = await Store.open({ path: dataFile });
    await Promise.all(old.map((record) => first.results.put(record)));
    const changed: ReactorResultRecord = {
      ...old[7]!,
      status: 'completed',
      delivery: { ...old[7]!.delivery, status: 'delivered', attempts: 1, last_status: 200 },
    };
    await first.results.put(changed);
    await first.close();
    const folder = path.join(dir, 'data', 'reactor-results');
    const leftover = await writeShards(folder, [old[7]!, ...results(3, 1000)], OLD_RESULT_SHARDS, 2);

    const store = await openStore(dataFile);
    expect(store.results.get(changed.tenant_id, changed.id)).toEqual(changed);
    for (const record of results(3, 1000)) expect(store.results.get(record.tenant_id, record.id)).toEqual(record);
    expect(store.results.list(TENANT_A).length + store.results.list(TENANT_B).length).toBe(53);
    for (const file of leftover) await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('moves old results in one write: one the disk refuses opens nothing and keeps every old file, and the next open moves them all', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    await (await Store.open({ path: dataFile })).close();
    const folder = path.join(dir, 'data', 'reactor-results');
    const old = results(100);
    const oldFiles = await writeShards(folder, old, OLD_RESULT_SHARDS, 2);
    const contents = await Promise.all(oldFiles.map((file) => readFile(file, 'utf8')));

    const fs = new FaultyFileSystem();
    fs.failWrites((file) => file.includes(`${path.sep}journal${path.sep}`));
    await expect(Store.open({ path: dataFile, fileSystem: fs })).rejects.toThrow(/disk is full/);
    // Every record in one journal entry, refused: no new file, every old one as it was.
    expect(fs.writes()).toBe(1);
    expect((await readdir(folder)).sort()).toEqual(oldFiles.map((file) => path.basename(file)).sort());
    expect(await Promise.all(oldFiles.map((file) => readFile(file, 'utf8')))).toEqual(contents);

    const store = await openStore(dataFile);
    expect(store.results.list(TENANT_A)).toEqual(old.filter((record) => record.tenant_id === TENANT_A));
    expect(store.results.list(TENANT_B)).toEqual(old.filter((record) => record.tenant_id === TENANT_B));
    expect((await readdir(folder)).filter((name) => /^[0-9a-f]{2}\.json$/.test(name))).toEqual([]);
  });

  it('keeps an old result it cannot serve in its old file alone, reported at each open; a result deleted since is not moved back', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    await (await Store.open({ path: dataFile })).close();
    const folder = path.join(dir, 'data', 'reactor-results');
    const old = results(20);
    const { reactor_id: _dropped, ...broken } = { ...old[5]!, id: 'broken' };
    await writeShards(folder, old, OLD_RESULT_SHARDS, 2);
    const [brokenFile] = await writeShards(
      folder,
      [
        ...old.filter(
          (record) =>
            shardFileName(record, OLD_RESULT_SHARDS, 2) ===
            shardFileName(broken as ReactorResultRecord, OLD_RESULT_SHARDS, 2),
        ),
        broken as ReactorResultRecord,
      ],
      OLD_RESULT_SHARDS,
      2,
    );

    const store = await Store.open({ path: dataFile });
    expect(store.problems).toEqual([expect.stringContaining(`${brokenFile!}: record`)]);
    expect(store.problems[0]).toContain('(id broken) has no valid "reactor_id"');
    expect(store.results.get(TENANT_B, 'broken')).toBeUndefined();
    expect(store.results.list(TENANT_A).length + store.results.list(TENANT_B).length).toBe(20);
    expect((await readdir(folder)).filter((name) => /^[0-9a-f]{2}\.json$/.test(name))).toEqual([
      path.basename(brokenFile!),
    ]);
    expect(((await readJson(brokenFile!)) as ShardFile<unknown>).records).toEqual([broken]);
    const gone = old[3]!;
    expect(await store.results.delete(gone.tenant_id, gone.id)).toBe(true);
    await store.close();

    const reopened = await openStore(dataFile);
    expect(reopened.results.get(gone.tenant_id, gone.id)).toBeUndefined();
    expect(reopened.problems).toEqual([expect.stringContaining('(id broken) has no valid "reactor_id"')]);
    expect(reopened.results.list(TENANT_A).length + reopened.results.list(TENANT_B).length).toBe(19);
  });
});

describe('mapBounded', () => {
  it('keeps at most the limit in flight and returns results in the items’ order', async () => {
    let inFlight = 0;
    let most = 0;
    const items = Array.from({ length: 40 }, (_, i) => i);
    const results = await mapBounded(items, 8, async (item) => {
      most = Math.max(most, ++inFlight);
      // Later items finish first, so completion order differs from item order.
      await new Promise((resolve) => setTimeout(resolve, (40 - item) % 7));
      inFlight--;
      return item * 2;
    });
    expect(results).toEqual(items.map((item) => item * 2));
    expect(most).toBe(8);
  });

  it('starts nothing after a failure, and rejects only once the calls in flight have settled', async () => {
    const started: number[] = [];
    let settled = 0;
    const failure = new Error('disk full');
    const outcome = mapBounded(
      Array.from({ length: 100 }, (_, i) => i),
      4,
      async (item) => {
        started.push(item);
        await new Promise((resolve) => setTimeout(resolve, item === 5 ? 0 : 10));
        settled++;
        if (item === 5) throw failure;
      },
    );
    await expect(outcome).rejects.toBe(failure);
    expect(settled).toBe(started.length);
    expect(started.length).toBeLessThan(12);
  });
});
