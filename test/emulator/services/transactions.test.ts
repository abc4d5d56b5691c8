import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { HttpError } from '../../../src/emulator/errors.js';
import type { Caller } from '../../../src/emulator/services/applications.js';
import { TransactionService, type TransactionRetention } from '../../../src/emulator/services/transactions.js';
import type { ApplicationRecord, TransactionRecord } from '../../../src/emulator/store/records.js';
import { Store, TRANSACTION_SHARDS } from '../../../src/emulator/store/store.js';
import { startEmulator } from '../../helpers/emulator.js';
import { tempDir } from '../../helpers/temp.js';

const HOUR = 3_600_000;
const START = Date.parse('2030-01-01T00:00:00.000Z');

const caller: Caller = {
  tenantId: 'tenant-a',
  application: { id: 'app-a', tenant_id: 'tenant-a' } as ApplicationRecord,
};

/** A store on disk and the transactions over it, on a clock the test moves. */
async function setup(retention: TransactionRetention = {}) {
  const dir = await tempDir();
  const dataFile = path.join(dir, 'data.json');
  const store = await Store.open({ path: dataFile });
  onTestFinished(() => store.close());
  let now = START;
  const service = new TransactionService(store, 'enterprise', HOUR, () => new Date(now), retention);
  const advance = (ms: number) => {
    now += ms;
  };
  return { store, service, advance, folder: path.join(dir, 'data', 'transactions'), dataFile };
}

/** Every record in the transactions' shard files, and their size on disk. */
async function onDisk(folder: string): Promise<{ records: number; bytes: number }> {
  let records = 0;
  let bytes = 0;
  for (const name of await readdir(folder)) {
    const file = path.join(folder, name);
    bytes += (await stat(file)).size;
    records += (JSON.parse(await readFile(file, 'utf8')) as { records: unknown[] }).records.length;
  }
  return { records, bytes };
}

/** Creates `count` transactions together (a few writes) and ends them: half committed, half rolled back. */
async function endMany(service: TransactionService, count: number): Promise<string[]> {
  const ids = (await Promise.all(Array.from({ length: count }, () => service.create(caller)))).map(({ id }) => id);
  await Promise.all(ids.map((id, i) => (i % 2 === 0 ? service.commit(caller, id) : service.rollback(caller, id))));
  return ids;
}

function notFound(read: () => unknown): HttpError {
  try {
    read();
  } catch (error) {
    return error as HttpError;
  }
  throw new Error('expected a 404');
}

describe('ended transactions', () => {
  it('are readable for 24 h after they end, then a 404 saying so, and the sweep removes them from disk', async () => {
    const { store, service, advance, folder } = await setup();
    const ended = await endMany(service, 200);
    const open = await service.create(caller);
    await store.flush();
    const before = await onDisk(folder);
    expect(before.records).toBe(201);

    advance(24 * HOUR - 1);
    expect(service.get(caller, ended[0]!).status).toBe('committed');
    expect(service.get(caller, ended[1]!).status).toBe('rolled_back');
    advance(1);
    // Past the retention: gone for a reader at once, before any sweep.
    const gone = notFound(() => service.get(caller, ended[0]!));
    expect(gone.status).toBe(404);
    expect(gone.message).toBe(`No transaction with id ${ended[0]} (ended transactions are kept 24 h after they end).`);
    expect(notFound(() => service.open(caller, ended[1]!)).status).toBe(404);

    // 200 removed, and the open one ended as expired.
    expect(await service.sweep()).toBe(201);
    await store.flush();
    // The open one expired (after its hour) and is kept until 24 h after that.
    expect(service.get(caller, open.id).status).toBe('expired');
    const after = await onDisk(folder);
    expect(after.records).toBe(1);
    // What is left is the one record and shard files emptied (`{"version":1,"records":[]}`): bounded
    // by the shard count, however many were removed.
    const empty = JSON.stringify({ version: 1, records: [] }).length;
    expect(after.bytes).toBeLessThanOrEqual(TRANSACTION_SHARDS * empty + 1_000);
    expect(after.bytes).toBeLessThan(before.bytes / 5);

    advance(HOUR);
    expect(await service.sweep()).toBe(1);
    await store.flush();
    expect((await onDisk(folder)).records).toBe(0);
  });

  it('past the cap per tenant, the oldest ended go first when one is created; an open one is never dropped', async () => {
    const { service } = await setup({ maxPerTenant: 10 });
    const open = await service.create(caller);
    const ended = await endMany(service, 12);
    // The creates were saved together, so some of them went past the cap before the next create counts them.
    const next = await service.create(caller);
    expect(service.get(caller, open.id).status).toBe('open');
    expect(service.get(caller, next.id).status).toBe('open');
    const kept = ended.filter((id) => {
      try {
        service.get(caller, id);
        return true;
      } catch {
        return false;
      }
    });
    expect(kept.length).toBe(8);
    // The newest ones stay.
    expect(kept).toEqual(ended.slice(-8));
  });

  it('a write of one rewrites one small shard, however many ended ones are kept', async () => {
    const { store, service, folder } = await setup();
    await endMany(service, 500);
    await store.flush();
    // 500 transactions over 2048 shards: no file holds more than a handful (a create or an end
    // rewrites one of them), where one file held them all.
    for (const name of await readdir(folder)) {
      const { records } = JSON.parse(await readFile(path.join(folder, name), 'utf8')) as { records: unknown[] };
      expect(records.length).toBeLessThanOrEqual(8);
    }
  });

  it('in a transactions.json of an earlier svc are moved into the shards when the store opens', async () => {
    const dir = await tempDir();
    const dataFile = path.join(dir, 'data.json');
    const first = await Store.open({ path: dataFile });
    await first.close();
    const record: TransactionRecord = {
      id: '11111111-1111-4111-8111-111111111111',
      tenant_id: caller.tenantId,
      created_by: 'app-a',
      created_at: new Date(START).toISOString(),
      expires_at: new Date(START + HOUR).toISOString(),
      status: 'open',
      staged: [],
    };
    const old = path.join(dir, 'data', 'transactions.json');
    await writeFile(old, JSON.stringify({ version: 1, records: [record] }));

    const store = await Store.open({ path: dataFile });
    onTestFinished(() => store.close());
    expect(store.transactions.get(caller.tenantId, record.id)).toEqual(record);
    await expect(stat(old)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await onDisk(path.join(dir, 'data', 'transactions'))).records).toBe(1);
  });
});

describe('ended transactions over HTTP', () => {
  it('GET of one past its retention is a 404 naming the retention; the start sweep removes it', async () => {
    let now = START;
    const clock = () => new Date(now);
    const first = await startEmulator({ tier: 'enterprise', clock });
    const call = (emu: typeof first, method: string, route: string) => emu.call(method, route, { key: emu.privateKey });
    const id = (await call(first, 'POST', '/transactions')).body.id as string;
    expect((await call(first, 'POST', `/transactions/${id}/rollback`)).status).toBe(200);
    now += 25 * HOUR;
    const gone = await call(first, 'GET', `/transactions/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.headers['content-type']).toContain('application/problem+json');
    expect(gone.body.detail).toContain('ended transactions are kept 24 h after they end');
    expect((await call(first, 'POST', `/transactions/${id}/commit`)).status).toBe(404);
    await first.dispose();

    const again = await startEmulator({ dir: first.dir, tier: 'enterprise', clock, privateKey: first.privateKey });
    expect((await call(again, 'GET', `/transactions/${id}`)).status).toBe(404);
    expect((await onDisk(path.join(first.dir, '.svc', 'data', 'transactions'))).records).toBe(0);
  });
});
