import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { shardIndex } from '../../../src/emulator/store/collection.js';
import { StoreWriteError } from '../../../src/emulator/store/errors.js';
import type { TokenRecord } from '../../../src/emulator/store/records.js';
import { JOURNAL_FOLDER, Store, TOKEN_SHARDS } from '../../../src/emulator/store/store.js';
import { packageVersion } from '../../../src/lib/package-version.js';
import { runSvc } from '../../helpers/cli.js';
import { type HttpResult, startEmulator, type TestEmulator } from '../../helpers/emulator.js';
import { FaultyFileSystem } from '../../helpers/faults.js';
import { tempDir } from '../../helpers/temp.js';
import { eventually, sleep } from '../../helpers/wait.js';

/** An answer, or a failure naming the request if none comes in `ms` (a hang fails the test, not the run). */
async function answered<T>(what: string, call: Promise<T>, ms = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([call, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function tokenFile(emu: TestEmulator, id: string): string {
  const shard = shardIndex(emu.tenantId, id, TOKEN_SHARDS).toString(16).padStart(3, '0');
  return path.join(emu.dir, '.svc', 'data', 'tokens', `${shard}.json`);
}

/** A token id whose shard is not `file`'s. */
function elsewhere(emu: TestEmulator, file: string, prefix: string): string {
  for (let i = 0; ; i++) if (tokenFile(emu, `${prefix}${i}`) !== file) return `${prefix}${i}`;
}

/**
 * A shard file that cannot be written whoever runs svc (root too, where a read-only mode stops
 * nothing): a folder, not empty, stands where the file goes, so its rename fails (EISDIR).
 */
async function blockFile(file: string): Promise<void> {
  await rm(file, { force: true });
  await mkdir(file, { recursive: true });
  await writeFile(path.join(file, 'in-the-way'), 'x');
}

describe('a store that cannot write its shard files', () => {
  it('answers every write (503 naming the file and the cause once the journal is full), says so on /health, and recovers once the file can be written', async () => {
    const emu = await startEmulator();
    const asPrivate = (method: string, route: string, body?: unknown): Promise<HttpResult> =>
      answered(`${method} ${route}`, emu.call(method, route, { key: emu.privateKey, body }));
    const stuck = tokenFile(emu, 'stuck');
    await blockFile(stuck);

    // A write of two files: saved by its journal entry, whose files then cannot all be written.
    const first = await asPrivate('POST', '/tokenize', [
      { type: 'token', id: 'stuck', data: 'x' },
      { type: 'token', id: elsewhere(emu, stuck, 'other-'), data: 'y' },
    ]);
    expect(first.status, first.text).toBe(201);

    // Every later write goes through the journal, which holds a bounded number of entries.
    const statuses: number[] = [];
    let refused: HttpResult | undefined;
    for (let i = 0; i < 80; i++) {
      const answer = await asPrivate('POST', '/tokens', { type: 'token', id: `t-${i}`, data: 'v' });
      statuses.push(answer.status);
      if (answer.status !== 201) refused ??= answer;
    }
    expect(new Set(statuses)).toEqual(new Set([201, 503]));
    expect(refused!.headers['content-type']).toContain('application/problem+json');
    expect(refused!.body.detail).toContain(stuck);
    expect(refused!.body.detail).toContain('a folder stands where a file must go (EISDIR)');
    expect(refused!.body.detail).toContain('Nothing of it was kept');

    const health = await answered('GET /health', emu.call('GET', '/health', { key: null }));
    expect(health.status).toBe(503);
    expect(health.body.status).toBe('unavailable');
    expect(health.body.store.writable).toBe(false);
    expect(health.body.store.detail).toContain(stuck);
    expect(health.body.store.detail).toContain('EISDIR');

    // The file can be written again: the store finds out by itself, and /health with it.
    await rm(stuck, { recursive: true });
    await eventually(async () => {
      const again = await emu.call('GET', '/health', { key: null });
      expect(again.status).toBe(200);
      expect(again.body.status).toBe('ok');
    }, 15_000);
    expect((await asPrivate('POST', '/tokens', { type: 'token', id: 'after', data: 'v' })).status).toBe(201);
    expect((await asPrivate('GET', '/tokens/stuck')).status).toBe(200);
    await eventually(async () => expect(await readdir(path.join(emu.dir, '.svc', 'data', JOURNAL_FOLDER))).toEqual([]));
  });
});

const TENANT = 'tenant-a';

function token(id: string): TokenRecord {
  return {
    id,
    tenant_id: TENANT,
    type: 'token',
    containers: [],
    metadata: {},
    created_at: '2024-01-01T00:00:00.000Z',
    expires_at: null,
    secret: { iv: 'iv', tag: 'tag', ct: `ct-${id}` },
  };
}

async function openStore(): Promise<{ store: Store; fs: FaultyFileSystem; folder: string; reports: string[] }> {
  const dir = await tempDir();
  const fs = new FaultyFileSystem();
  const reports: string[] = [];
  const store = await Store.open({ path: path.join(dir, 'data.json'), fileSystem: fs, report: (m) => reports.push(m) });
  onTestFinished(() => store.close());
  return { store, fs, folder: path.join(dir, 'data'), reports };
}

function storeTokenFile(folder: string, id: string): string {
  return path.join(folder, 'tokens', `${shardIndex(TENANT, id, TOKEN_SHARDS).toString(16).padStart(3, '0')}.json`);
}

describe("the store's writer when a file cannot be written", () => {
  it('settles every write: once the journal is full they are refused naming the file, and it drains by itself once the file can be written', async () => {
    const { store, fs, folder, reports } = await openStore();
    const stuck = storeTokenFile(folder, 'stuck');
    fs.failWrites((file) => file === stuck, 'EIO');
    await store.write((batch) => {
      batch.put(store.tokens, token('stuck'));
      batch.put(store.tokens, token(storeTokenFile(folder, 'x') === stuck ? 'y' : 'x'));
    });
    // One after the other: each write is a journal entry of its own.
    const settled: PromiseSettledResult<void>[] = [];
    for (let i = 0; i < 100; i++) settled.push((await Promise.allSettled([store.tokens.put(token(`t-${i}`))]))[0]!);
    const refused = settled.filter((result) => result.status === 'rejected');
    expect(refused.length).toBeGreaterThan(0);
    const reason = (refused[0] as PromiseRejectedResult).reason as StoreWriteError;
    expect(reason).toBeInstanceOf(StoreWriteError);
    expect(reason.message).toBe(
      `The change was not saved: the journal is full of saved writes waiting for ${stuck}, which cannot be written: ` +
        'an input/output error of the disk (EIO). Nothing of it was kept; fix the cause and retry.',
    );
    // What was refused is not served; what was saved is.
    const served = settled.map((result, i) => (result.status === 'fulfilled' ? `t-${i}` : undefined));
    for (const [i, id] of served.entries()) expect(store.tokens.get(TENANT, `t-${i}`)?.id).toBe(id);
    expect(store.writeProblem).toContain(`The store cannot write ${stuck}: an input/output error of the disk (EIO)`);
    // Reported once, however many times the checkpoint is retried.
    expect(reports.filter((line) => line.includes(stuck))).toHaveLength(1);

    fs.heal();
    await eventually(() => expect(store.writeProblem).toBeUndefined(), 15_000);
    expect(await readdir(path.join(folder, JOURNAL_FOLDER))).toEqual([]);
    await store.tokens.put(token('after'));
  });

  it('reports a journal the disk refuses until a retry writes one, with no write asked for', async () => {
    const { store, fs, folder } = await openStore();
    const journal = path.join(folder, JOURNAL_FOLDER);
    fs.failWrites((file) => path.dirname(file) === journal);
    const several = store.write((batch) => {
      batch.put(store.tokens, token('a'));
      batch.put(store.tokens, token(storeTokenFile(folder, 'b') === storeTokenFile(folder, 'a') ? 'c' : 'b'));
    });
    await expect(several).rejects.toThrow(`writing ${journal} failed: the disk is full (ENOSPC)`);
    expect(store.writeProblem).toContain(
      `The store cannot write ${journal}: the disk is full (ENOSPC); free some disk space`,
    );
    fs.heal();
    await eventually(() => expect(store.writeProblem).toBeUndefined(), 15_000);
    // The retry's empty entry is gone with it.
    expect(await readdir(journal)).toEqual([]);
  });

  it('closes with a file it cannot write, and retries nothing once closed', async () => {
    const { store, fs, folder } = await openStore();
    const stuck = storeTokenFile(folder, 'stuck');
    fs.failWrites((file) => file === stuck);
    await expect(store.tokens.put(token('stuck'))).rejects.toBeInstanceOf(StoreWriteError);
    expect(store.writeProblem).toContain(stuck);
    await answered('close', store.close());
    const calls = fs.calls.length;
    // The first retry would come within 200 ms.
    await sleep(600);
    expect(fs.calls.length).toBe(calls);
  });
});

describe('GET /health', () => {
  it('answers 503 naming the file and the cause while a write is refused, and 200 again once the disk takes writes, with no write asked for', async () => {
    const fs = new FaultyFileSystem();
    const emu = await startEmulator({ fileSystem: fs });
    expect((await emu.call('GET', '/health', { key: null })).status).toBe(200);
    fs.failWrites(() => true);
    const refused = await emu.call('POST', '/applications', {
      body: { name: 'lost', type: 'private', permissions: ['token:read'] },
    });
    expect(refused.status).toBe(503);
    const health = await emu.call('GET', '/health', { key: null });
    expect(health.status).toBe(503);
    expect(health.headers['content-type']).toContain('application/json');
    expect(health.body).toMatchObject({ status: 'unavailable', store: { writable: false } });
    // `svc version` still reads the version off it.
    const version = await runSvc(['version', '--json', '--base-url', emu.url], { cwd: emu.dir });
    expect(version.json().server).toEqual({ url: emu.url, reachable: true, version: packageVersion() });
    expect(health.body.store.detail).toMatch(
      /^The store cannot write \S+: the disk is full \(ENOSPC\); free some disk space/,
    );
    fs.heal();
    await eventually(async () => expect((await emu.call('GET', '/health', { key: null })).status).toBe(200), 15_000);
  });
});
