import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { shardIndex } from '../../../src/emulator/store/collection.js';
import { JOURNAL_FOLDER, TOKEN_SHARDS, TRANSACTION_SHARDS } from '../../../src/emulator/store/store.js';
import { startEmulator, type TestEmulator } from '../../helpers/emulator.js';
import { FaultyFileSystem } from '../../helpers/faults.js';

/** A persistent emulator whose store writes go through a file system that fails on demand. */
async function setup() {
  const fs = new FaultyFileSystem();
  const emu = await startEmulator({ fileSystem: fs });
  const folder = path.join(emu.dir, '.svc', 'data');
  const asPrivate = (method: string, route: string, options: Parameters<TestEmulator['call']>[2] = {}) =>
    emu.call(method, route, { key: emu.privateKey, ...options });
  const tokenFile = (id: string) =>
    path.join(folder, 'tokens', `${shardIndex(emu.tenantId, id, TOKEN_SHARDS).toString(16).padStart(3, '0')}.json`);
  return { fs, emu, folder, asPrivate, tokenFile };
}

function expectNotSaved(
  result: { status: number; headers: Record<string, unknown>; body: { detail: string } },
  cause: RegExp,
): void {
  expect(result.status).toBe(503);
  expect(result.headers['content-type']).toContain('application/problem+json');
  expect(result.body.detail).toMatch(cause);
  expect(result.body.detail).toContain('Nothing of it was kept');
}

describe('a write the disk refuses', () => {
  it('POST /tokens: 503, the token is not served, a retry with the same id is created, and a later write of its file leaves it out', async () => {
    const { fs, emu, asPrivate, tokenFile } = await setup();
    // Its journal too: while earlier entries wait for their files (the bootstrap's), a write of one
    // file is saved by a journal entry.
    fs.failWrites(
      (file) =>
        file === tokenFile('card-1') || path.dirname(file) === path.join(emu.dir, '.svc', 'data', JOURNAL_FOLDER),
    );

    const failed = await asPrivate('POST', '/tokens', { body: { id: 'card-1', type: 'token', data: 'secret-1' } });
    expectNotSaved(failed, /the disk is full \(ENOSPC\)/);
    expect(failed.text).not.toContain('secret-1');
    expect((await asPrivate('GET', '/tokens/card-1')).status).toBe(404);
    expect((await asPrivate('POST', '/detokenize', { body: '{{ card-1 }}' })).status).toBe(400);
    expect((await asPrivate('GET', '/tokens')).body.data).toEqual([]);
    expect(emu.events.some((event) => event.type === 'error' && event.message.includes('ENOSPC'))).toBe(true);

    fs.heal();
    // A token of the same file, saved after the failure: the failed one must not ride along.
    let neighbour = 'n0';
    for (let i = 1; tokenFile(neighbour) !== tokenFile('card-1'); i++) neighbour = `n${i}`;
    expect((await asPrivate('POST', '/tokens', { body: { id: neighbour, type: 'token', data: 'other' } })).status).toBe(
      201,
    );
    await emu.dispose();
    const again = await startEmulator({ dir: emu.dir, privateKey: emu.privateKey });
    const listed = await again.call('GET', '/tokens', { key: emu.privateKey });
    expect(listed.body.data.map((token: { id: string }) => token.id)).toEqual([neighbour]);

    const retried = await again.call('POST', '/tokens', {
      key: emu.privateKey,
      body: { id: 'card-1', type: 'token', data: 'secret-1' },
    });
    expect(retried.status, retried.text).toBe(201);
  });

  it('POST /tokenize: none of its tokens is served when its journal entry fails, and the retry saves them all', async () => {
    const { fs, folder, asPrivate } = await setup();
    fs.failWrites((file) => path.dirname(file) === path.join(folder, JOURNAL_FOLDER), 'EROFS');
    const body = Array.from({ length: 40 }, (_, i) => ({ type: 'token', id: `t-${i}`, data: `v${i}` }));

    expectNotSaved(await asPrivate('POST', '/tokenize', { body }), /the file system is read-only \(EROFS\)/);
    expect((await asPrivate('GET', '/tokens?size=1')).body.pagination.total_items).toBe(0);
    expect((await asPrivate('GET', '/tokens/t-0')).status).toBe(404);

    fs.heal();
    const retried = await asPrivate('POST', '/tokenize', { body });
    expect(retried.status, retried.text).toBe(201);
    expect((await asPrivate('GET', '/tokens?size=1')).body.pagination.total_items).toBe(40);
  });

  it('POST /applications: a failed create is not listed, its key does not work, and the next create is saved alone', async () => {
    const { fs, emu, folder } = await setup();
    // Its journal too: while earlier entries wait for their files (the bootstrap's), a write of one
    // file is saved by a journal entry.
    fs.failWrites(
      (file) =>
        file === path.join(folder, 'applications.json') || path.dirname(file) === path.join(folder, JOURNAL_FOLDER),
    );
    const failed = await emu.call('POST', '/applications', {
      body: { name: 'lost', type: 'private', permissions: ['token:read'] },
    });
    expectNotSaved(failed, /ENOSPC/);
    const names = async () =>
      (await emu.call('GET', '/applications?size=100')).body.data.map((app: { name: string }) => app.name);
    expect(await names()).not.toContain('lost');

    fs.heal();
    const created = await emu.call('POST', '/applications', {
      body: { name: 'kept', type: 'private', permissions: ['token:read'] },
    });
    expect(created.status).toBe(201);
    expect((await emu.call('GET', '/tokens', { key: created.body.key })).status).toBe(200);
    expect(await names()).toContain('kept');
    expect(await names()).not.toContain('lost');
  });

  it('a transaction commit that fails leaves it open with nothing applied, and commits whole once retried', async () => {
    const { fs, folder, asPrivate } = await setup();
    const tx = (await asPrivate('POST', '/transactions')).body.id as string;
    const inTx = { 'svc-transaction-id': tx };
    const body = Array.from({ length: 50 }, (_, i) => ({ type: 'token', id: `s-${i}`, data: `v${i}` }));
    expect((await asPrivate('POST', '/tokenize', { body, headers: inTx })).status).toBe(201);

    fs.failWrites((file) => path.dirname(file) === path.join(folder, JOURNAL_FOLDER));
    expectNotSaved(await asPrivate('POST', `/transactions/${tx}/commit`), /ENOSPC/);
    expect((await asPrivate('GET', `/transactions/${tx}`)).body.status).toBe('open');
    expect((await asPrivate('GET', '/tokens?size=1')).body.pagination.total_items).toBe(0);
    // Still open, its staged writes intact: they are visible inside it.
    expect((await asPrivate('GET', '/tokens?size=1', { headers: inTx })).body.pagination.total_items).toBe(50);

    fs.heal();
    expect((await asPrivate('POST', `/transactions/${tx}/commit`)).status).toBe(200);
    expect((await asPrivate('GET', '/tokens?size=1')).body.pagination.total_items).toBe(50);
  });

  it('a token write staged in a transaction that fails is not staged', async () => {
    const { fs, emu, folder, asPrivate } = await setup();
    const tx = (await asPrivate('POST', '/transactions')).body.id as string;
    const inTx = { 'svc-transaction-id': tx };
    const shard = shardIndex(emu.tenantId, tx, TRANSACTION_SHARDS).toString(16).padStart(3, '0');
    fs.failWrites(
      (file) =>
        file === path.join(folder, 'transactions', `${shard}.json`) ||
        path.dirname(file) === path.join(folder, JOURNAL_FOLDER),
    );
    expectNotSaved(
      await asPrivate('POST', '/tokens', { body: { id: 'staged', type: 'token', data: 'x' }, headers: inTx }),
      /ENOSPC/,
    );
    expect((await asPrivate('GET', '/tokens/staged', { headers: inTx })).status).toBe(404);
    fs.heal();
    expect(
      (await asPrivate('POST', '/tokens', { body: { id: 'staged', type: 'token', data: 'x' }, headers: inTx })).status,
    ).toBe(201);
  });
});

describe('writes at once, now that a write is served only once saved', () => {
  it('creates a token id once when two requests ask for it together', async () => {
    const { asPrivate } = await setup();
    const body = { id: 'twice', type: 'token', data: 'x' };
    const answers = await Promise.all([
      asPrivate('POST', '/tokens', { body }),
      asPrivate('POST', '/tokenize', { body: [body] }),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 400]);
    expect(answers.find((answer) => answer.status === 400)?.text).toContain('a token with id twice already exists');
  });

  it('keeps a key regenerated while an update of the same Application is being saved', async () => {
    const { emu } = await setup();
    const app = (
      await emu.call('POST', '/applications', { body: { name: 'app', type: 'private', permissions: ['token:read'] } })
    ).body;
    const [regenerated, updated] = await Promise.all([
      emu.call('POST', `/applications/${app.id}/regenerate`),
      emu.call('PUT', `/applications/${app.id}`, { body: { name: 'renamed', permissions: ['token:read'] } }),
    ]);
    expect([regenerated.status, updated.status]).toEqual([200, 200]);
    expect((await emu.call('GET', '/tokens', { key: regenerated.body.key })).status).toBe(200);
    expect((await emu.call('GET', '/tokens', { key: app.key })).status).toBe(401);
    expect((await emu.call('GET', `/applications/${app.id}`)).body.name).toBe('renamed');
  });
});
