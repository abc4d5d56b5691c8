import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { shardIndex, type ShardFile } from '../../../src/emulator/store/collection.js';
import { StoreError, StoreWriteError } from '../../../src/emulator/store/errors.js';
import type { ApplicationRecord, TokenRecord } from '../../../src/emulator/store/records.js';
import { JOURNAL_FOLDER, Store, TOKEN_SHARDS, type StoreOptions } from '../../../src/emulator/store/store.js';
import { FaultyFileSystem } from '../../helpers/faults.js';
import { tempDir } from '../../helpers/temp.js';

const TENANT = 'tenant-a';

function token(id: string, overrides: Partial<TokenRecord> = {}): TokenRecord {
  return {
    id,
    tenant_id: TENANT,
    type: 'token',
    containers: ['/general/high/'],
    metadata: {},
    created_at: '2024-01-01T00:00:00.000Z',
    expires_at: null,
    secret: { iv: `iv-${id}`, tag: `tag-${id}`, ct: `ct-${id}` },
    ...overrides,
  };
}

function application(id: string, keyHash = `hash-${id}`): ApplicationRecord {
  return {
    id,
    tenant_id: TENANT,
    name: `app ${id}`,
    type: 'private',
    permissions: ['token:read'],
    rules: [],
    created_at: '2024-01-01T00:00:00.000Z',
    key_hash: keyHash,
  };
}

async function open(dataFile: string, options: Omit<StoreOptions, 'path'> = {}): Promise<Store> {
  const store = await Store.open({ path: dataFile, ...options });
  onTestFinished(() => store.close());
  return store;
}

async function setup(): Promise<{
  dir: string;
  dataFile: string;
  folder: string;
  fs: FaultyFileSystem;
  store: Store;
  reports: string[];
}> {
  const dir = await tempDir();
  const dataFile = path.join(dir, 'data.json');
  const fs = new FaultyFileSystem();
  const reports: string[] = [];
  const store = await open(dataFile, { fileSystem: fs, report: (message) => reports.push(message) });
  return { dir, dataFile, folder: path.join(dir, 'data'), fs, store, reports };
}

function tokenFile(folder: string, id: string): string {
  return path.join(folder, 'tokens', `${shardIndex(TENANT, id, TOKEN_SHARDS).toString(16).padStart(3, '0')}.json`);
}

/** An id whose token shares the shard of `id`'s. */
function sameShardAs(id: string, prefix: string): string {
  const shard = shardIndex(TENANT, id, TOKEN_SHARDS);
  for (let i = 0; ; i++) if (shardIndex(TENANT, `${prefix}${i}`, TOKEN_SHARDS) === shard) return `${prefix}${i}`;
}

async function idsIn(file: string): Promise<string[]> {
  const content = JSON.parse(await readFile(file, 'utf8')) as ShardFile<{ id: string }>;
  return content.records.map((record) => record.id).sort();
}

/** Every file under a folder, relative, sorted. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

describe('Store writes', () => {
  it('serves a write only once it is on disk, and coalesces a burst into a few saves', async () => {
    const { folder, fs, store } = await setup();
    const saving = store.applications.put(application('a1'));
    // Asked for, not saved yet: not served.
    expect(store.applications.get(TENANT, 'a1')).toBeUndefined();
    await saving;
    expect(store.applications.get(TENANT, 'a1')).toBeDefined();
    expect(await idsIn(path.join(folder, 'applications.json'))).toEqual(['a1']);

    const before = fs.writes();
    await Promise.all(Array.from({ length: 100 }, (_, i) => store.applications.put(application(`b${i}`))));
    expect(store.applications.list(TENANT)).toHaveLength(101);
    expect(fs.writes() - before).toBeLessThanOrEqual(3);
    expect(await idsIn(path.join(folder, 'applications.json'))).toHaveLength(101);
  });

  it('leaves no trace of a write that failed: not served, not in a later write of its file, and a retry works', async () => {
    const { dataFile, folder, fs, store } = await setup();
    const file = tokenFile(folder, 'lost');
    fs.failWrites((target) => target === file);

    const failure = await store.tokens.put(token('lost')).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(StoreWriteError);
    expect((failure as StoreWriteError).message).toContain(file);
    expect((failure as StoreWriteError).message).toContain('the disk is full (ENOSPC)');
    expect(store.tokens.get(TENANT, 'lost')).toBeUndefined();
    expect(store.tokens.list(TENANT)).toEqual([]);

    fs.heal();
    const neighbour = sameShardAs('lost', 'n');
    await store.tokens.put(token(neighbour));
    expect(await idsIn(file)).toEqual([neighbour]);
    // Its temp file was removed: nothing but the shard itself is in the folder.
    expect(await readdir(path.dirname(file))).toEqual([path.basename(file)]);

    await store.tokens.put(token('lost'));
    expect(await idsIn(file)).toEqual(['lost', neighbour].sort());
    await store.close();
    const reopened = await open(dataFile);
    expect(
      reopened.tokens
        .list(TENANT)
        .map((record) => record.id)
        .sort(),
    ).toEqual(['lost', neighbour].sort());
  });

  it('rejects every write of a burst whose save failed, and the next burst carries none of them', async () => {
    const { folder, fs, store } = await setup();
    const file = path.join(folder, 'applications.json');
    await store.applications.put(application('kept'));
    fs.failWrites((target) => target === file, 'EROFS');
    const results = await Promise.allSettled([
      store.applications.put(application('x1')),
      store.applications.put(application('x2')),
    ]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(String((results[0] as PromiseRejectedResult).reason)).toContain('the file system is read-only (EROFS)');
    fs.heal();
    await store.applications.put(application('next'));
    expect(await idsIn(file)).toEqual(['kept', 'next']);
    expect(store.applications.list(TENANT).map((app) => app.id)).toEqual(['kept', 'next']);
  });

  it('saves a write of several files all or nothing: a failed journal entry changes no file', async () => {
    const { folder, fs, store } = await setup();
    await store.tokens.put(token('before'));
    const snapshot = async () =>
      Promise.all(
        (await filesUnder(folder)).map(async (name) => [name, await readFile(path.join(folder, name), 'utf8')]),
      );
    const before = await snapshot();
    fs.failWrites((target) => path.dirname(target) === path.join(folder, JOURNAL_FOLDER));

    const ids = Array.from({ length: 40 }, (_, i) => `burst-${i}`);
    const write = store.write((batch) => {
      for (const id of ids) batch.put(store.tokens, token(id));
      batch.put(store.applications, application('with-them'));
    });
    await expect(write).rejects.toBeInstanceOf(StoreWriteError);
    expect(store.tokens.list(TENANT).map((record) => record.id)).toEqual(['before']);
    expect(store.applications.list(TENANT)).toEqual([]);
    expect(await snapshot()).toEqual(before);
    expect(
      fs.writes(
        (target) => target.includes(`${path.sep}tokens${path.sep}`) && !target.endsWith(tokenFile(folder, 'before')),
      ),
    ).toBe(0);
  });

  it('takes back a rename it could not make durable: a failed folder sync leaves neither the file nor a journal entry changed', async () => {
    const { dataFile, folder, fs, store } = await setup();
    const file = path.join(folder, 'applications.json');
    await store.applications.put(application('kept'));
    const journal = path.join(folder, JOURNAL_FOLDER);
    fs.fail((op, target) => op === 'syncDir' && (target === folder || target === journal), 'EIO');

    await expect(store.applications.put(application('one-file'))).rejects.toBeInstanceOf(StoreWriteError);
    const several = store.write((batch) => {
      batch.put(store.applications, application('many'));
      batch.put(store.tokens, token('many'));
    });
    await expect(several).rejects.toBeInstanceOf(StoreWriteError);
    expect(await idsIn(file)).toEqual(['kept']);
    expect(await readdir(journal)).toEqual([]);
    expect(store.applications.list(TENANT).map((app) => app.id)).toEqual(['kept']);

    fs.heal();
    await store.close();
    const reopened = await open(dataFile);
    expect(reopened.applications.list(TENANT).map((app) => app.id)).toEqual(['kept']);
    expect(reopened.tokens.empty).toBe(true);
  });

  it('keeps a saved write whose shard files fail after its journal entry, and finishes it later', async () => {
    const { dataFile, folder, fs, store, reports } = await setup();
    const ids = Array.from({ length: 30 }, (_, i) => `t-${i}`);
    const stuck = tokenFile(folder, ids[7]!);
    fs.failWrites((target) => target === stuck);
    await store.write((batch) => {
      for (const id of ids) batch.put(store.tokens, token(id));
    });
    // Saved (its journal entry is on disk), so served, though one of its files cannot be written yet.
    expect(store.tokens.list(TENANT)).toHaveLength(30);
    await store.flush();
    expect(reports.join('\n')).toContain(
      `Saved writes are not yet in their files: writing ${stuck} failed: the disk is full (ENOSPC)`,
    );
    expect(await readdir(path.join(folder, JOURNAL_FOLDER))).toHaveLength(1);

    // As a crash now would: the journal entry completes the write at the next open.
    await store.close();
    const reopened = await open(dataFile);
    expect(
      reopened.tokens
        .list(TENANT)
        .map((record) => record.id)
        .sort(),
    ).toEqual([...ids].sort());
    expect(await idsIn(stuck)).toContain(ids[7]);
    expect(await readdir(path.join(folder, JOURNAL_FOLDER))).toEqual([]);
  });

  it('finishes a saved write with the next write once the disk is back', async () => {
    const { folder, fs, store } = await setup();
    const ids = Array.from({ length: 10 }, (_, i) => `t-${i}`);
    const stuck = tokenFile(folder, ids[3]!);
    fs.failWrites((target) => target === stuck);
    await store.write((batch) => {
      for (const id of ids) batch.put(store.tokens, token(id));
    });
    await store.flush();
    expect(await readdir(path.join(folder, JOURNAL_FOLDER))).toHaveLength(1);
    fs.heal();
    await store.applications.put(application('later'));
    await store.flush();
    expect(await idsIn(stuck)).toContain(ids[3]);
    expect(await readdir(path.join(folder, JOURNAL_FOLDER))).toEqual([]);
  });

  it('replays a journal entry a crash left before its shard files, and removes it', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    const first = await Store.open({ path: dataFile });
    await first.tokens.put(token('old'));
    await first.close();
    // What a process killed between its journal entry and its shard files leaves.
    const journal = path.join(dir, 'data', JOURNAL_FOLDER);
    const changes = [
      ...Array.from({ length: 5 }, (_, i) => ({
        collection: 'tokens',
        tenant_id: TENANT,
        id: `new-${i}`,
        record: token(`new-${i}`),
      })),
      { collection: 'tokens', tenant_id: TENANT, id: 'old' },
      { collection: 'applications', tenant_id: TENANT, id: 'a1', record: application('a1') },
    ];
    await writeFile(path.join(journal, '00000001.json'), JSON.stringify({ version: 1, seq: 1, changes }));

    const store = await open(dataFile);
    expect(
      store.tokens
        .list(TENANT)
        .map((record) => record.id)
        .sort(),
    ).toEqual(['new-0', 'new-1', 'new-2', 'new-3', 'new-4']);
    expect(store.applications.get(TENANT, 'a1')).toEqual(application('a1'));
    expect(await readdir(journal)).toEqual([]);
    expect(await idsIn(tokenFile(path.join(dir, 'data'), 'new-2'))).toContain('new-2');
  });

  it('refuses to open with a damaged journal entry, naming it', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    await (await Store.open({ path: dataFile })).close();
    const entry = path.join(dir, 'data', JOURNAL_FOLDER, '00000003.json');
    await writeFile(entry, '{"version":1,"seq":3}');
    const error = await Store.open({ path: dataFile }).then(
      () => undefined,
      (rejection: unknown) => rejection,
    );
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).message).toContain(entry);
  });

  it('removes the temp files of interrupted writes when it opens, and nothing else', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    const first = await Store.open({ path: dataFile });
    await first.tokens.put(token('t1'));
    await first.close();
    const folder = path.join(dir, 'data');
    const temps = [
      path.join(dir, '.data.json.0123456789ab.tmp'),
      path.join(dir, '.credentials.json.0123456789ab.tmp'),
      path.join(folder, '.applications.json.abcdefabcdef.tmp'),
      path.join(folder, 'tokens', '.012.json.00112233aabb.tmp'),
      path.join(folder, JOURNAL_FOLDER, '.00000001.json.00112233aabb.tmp'),
    ];
    for (const temp of temps) await writeFile(temp, '{"half');
    const mine = path.join(folder, 'tokens', 'notes.tmp');
    await writeFile(mine, 'not a temp file of svc');

    const store = await open(dataFile);
    expect(store.tokens.get(TENANT, 't1')).toBeDefined();
    const left = await filesUnder(dir);
    expect(left.filter((name) => name.endsWith('.tmp'))).toEqual([path.relative(dir, mine)]);
  });
});

describe('Store write batches', () => {
  it('builds each write at its turn over what was saved and what was saved with it before', async () => {
    const { store } = await setup();
    await store.applications.put(application('a0', 'taken'));
    const claim = (id: string, keyHash: string) =>
      store.write((batch) => {
        if (batch.findBy(store.applications, 'key', keyHash)) throw new Error(`${keyHash} is taken`);
        batch.put(store.applications, application(id, keyHash));
        return id;
      });
    const results = await Promise.allSettled([
      claim('a1', 'free'),
      claim('a2', 'free'),
      claim('a3', 'taken'),
      claim('a4', 'other'),
    ]);
    expect(results.map((result) => (result.status === 'fulfilled' ? result.value : String(result.reason)))).toEqual([
      'a1',
      'Error: free is taken',
      'Error: taken is taken',
      'a4',
    ]);
    expect(store.applications.list(TENANT).map((app) => app.id)).toEqual(['a0', 'a1', 'a4']);
  });

  it('adds nothing of a build that throws part way', async () => {
    const { store } = await setup();
    const failing = store.write((batch) => {
      batch.put(store.tokens, token('half'));
      throw new Error('refused');
    });
    const fine = store.tokens.put(token('whole'));
    await expect(failing).rejects.toThrow('refused');
    await fine;
    expect(store.tokens.list(TENANT).map((record) => record.id)).toEqual(['whole']);
  });

  it('sees a record deleted earlier in the same save as gone, and re-indexes a replaced key', async () => {
    const { store } = await setup();
    await store.applications.put(application('a1', 'k1'));
    const del = store.applications.delete(TENANT, 'a1');
    const again = store.applications.delete(TENANT, 'a1');
    const rekey = store.write((batch) => {
      batch.put(store.applications, application('a2', 'k1'));
      return batch.findBy(store.applications, 'key', 'k1')?.id;
    });
    expect(await Promise.all([del, again, rekey])).toEqual([true, false, 'a2']);
    expect(store.applications.findBy('key', 'k1')?.id).toBe('a2');
  });
});

describe('Store records that cannot be served', () => {
  it('reports a record with missing fields, serves the rest, and keeps it in its file through later writes', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    await (await Store.open({ path: dataFile })).close();
    const file = path.join(dir, 'data', 'applications.json');
    const broken = {
      id: 'broken',
      tenant_id: TENANT,
      created_at: '2024-01-01T00:00:00.000Z',
      name: 'no key hash',
      type: 'private',
      permissions: [],
    };
    const noTenant = { id: 'orphan', created_at: '2024-01-01T00:00:00.000Z' };
    await writeFile(file, JSON.stringify({ version: 1, records: [application('good'), broken, noTenant] }));

    const store = await open(dataFile);
    expect(store.applications.list(TENANT).map((app) => app.id)).toEqual(['good']);
    expect(store.problems).toHaveLength(2);
    expect(store.problems[0]).toContain(file);
    expect(store.problems[0]).toContain('record 2 (id broken) has no valid "key_hash"');
    expect(store.problems[1]).toContain('record 3 (id orphan) has no "tenant_id"');
    expect(store.problems[0]).toContain('kept in the file but not served');

    await store.applications.put(application('added'));
    const content = JSON.parse(await readFile(file, 'utf8')) as ShardFile<unknown>;
    expect(content.records).toEqual([application('good'), application('added'), broken, noTenant]);
  });

  it('reports a token without its sealed data', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    await (await Store.open({ path: dataFile })).close();
    const { secret: _secret, ...bare } = token('bare');
    const file = tokenFile(path.join(dir, 'data'), 'bare');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify({ version: 1, records: [bare] }));
    const store = await open(dataFile);
    expect(store.tokens.empty).toBe(true);
    expect(store.problems.join('\n')).toContain('(id bare) has no valid "secret" (sealed data expected)');
  });
});
