import { readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ShardFile } from '../../../src/emulator/store/collection.js';
import type { TokenRecord } from '../../../src/emulator/store/records.js';
import { startEmulator, type TestEmulator } from '../../helpers/emulator.js';
import { FaultyFileSystem } from '../../helpers/faults.js';
import { mountTmpfs, remount } from '../../helpers/tmpfs.js';

/** Every token shard file of an emulator's store, with its content. */
async function tokenShards(emu: TestEmulator): Promise<{ file: string; content: ShardFile<TokenRecord> }[]> {
  const folder = path.join(emu.dir, '.svc', 'data', 'tokens');
  return Promise.all(
    (await readdir(folder)).map(async (name) => ({
      file: path.join(folder, name),
      content: JSON.parse(await readFile(path.join(folder, name), 'utf8')) as ShardFile<TokenRecord>,
    })),
  );
}

/** Rewrites the stored record of token `id` with `change`. */
async function alterToken(emu: TestEmulator, id: string, change: (record: TokenRecord) => unknown): Promise<string> {
  for (const { file, content } of await tokenShards(emu)) {
    const at = content.records.findIndex((record) => record.id === id);
    if (at < 0) continue;
    (content.records as unknown[])[at] = change(content.records[at]!);
    await writeFile(file, JSON.stringify(content));
    return file;
  }
  throw new Error(`no stored token ${id}`);
}

const warnings = (emu: TestEmulator) =>
  emu.events.flatMap((event) => (event.type === 'warning' ? [event.message] : []));
const errors = (emu: TestEmulator) => emu.events.flatMap((event) => (event.type === 'error' ? [event.message] : []));

describe('damaged records', () => {
  it('lists the other tokens when one has a damaged ciphertext, and reports it once', async () => {
    const first = await startEmulator();
    const key = first.privateKey;
    for (const id of ['a', 'b', 'c'])
      expect(
        (await first.call('POST', '/tokens', { key, body: { id, type: 'token', data: `data-${id}` } })).status,
      ).toBe(201);
    await first.dispose();
    await alterToken(first, 'b', (record) => ({
      ...record,
      secret: { ...record.secret, ct: Buffer.from('tampered').toString('base64') },
    }));

    const emu = await startEmulator({ dir: first.dir, privateKey: key });
    for (let i = 0; i < 2; i++) {
      const listed = await emu.call('GET', '/tokens', { key });
      expect(listed.status).toBe(200);
      expect(listed.body.data.map((token: { id: string }) => token.id)).toEqual(['a', 'c']);
    }
    expect(errors(emu).filter((message) => message.includes('token b '))).toEqual([
      `token b of tenant ${emu.tenantId} cannot be decrypted (its stored data is damaged, or sealed under another master key); lists leave it out.`,
    ]);
    const single = await emu.call('GET', '/tokens/b', { key });
    expect(single.status).toBe(500);
    expect(single.body.detail).toContain('Token b cannot be decrypted: its stored data is damaged');
  });

  it('reports a token record with missing fields at start, serves the others, and keeps it in its file', async () => {
    const first = await startEmulator();
    const key = first.privateKey;
    for (const id of ['a', 'b']) await first.call('POST', '/tokens', { key, body: { id, type: 'token', data: id } });
    await first.dispose();
    const file = await alterToken(first, 'b', ({ containers: _gone, ...rest }) => rest);

    const emu = await startEmulator({ dir: first.dir, privateKey: key });
    expect(warnings(emu).join('\n')).toContain(`${file}: record`);
    expect(warnings(emu).join('\n')).toContain('(id b) has no valid "containers"');
    expect((await emu.call('GET', '/tokens', { key })).body.data.map((token: { id: string }) => token.id)).toEqual([
      'a',
    ]);
    expect((await emu.call('GET', '/tokens/b', { key })).status).toBe(404);
    await emu.dispose();
    expect(await readFile(file, 'utf8')).toContain('"id":"b"');
  });
});

describe('missing files', () => {
  it('rebuilds a deleted tenants.json from the Applications, keeps the tenant and its keys, and says what was lost', async () => {
    const first = await startEmulator();
    const { managementKey, privateKey, tenantId } = first;
    await first.call('POST', '/tokens', { key: privateKey, body: { id: 'kept', type: 'token', data: 'x' } });
    await first.dispose();
    await rm(path.join(first.dir, '.svc', 'data', 'tenants.json'));

    const emu = await startEmulator({ dir: first.dir });
    expect(emu.started.bootstrap.created).toBe(false);
    expect(emu.tenantId).toBe(tenantId);
    expect(warnings(emu).join('\n')).toMatch(
      /tenant .* but no row for it in tenants\.json .* rebuilt it, .* restore tenants\.json from a backup/,
    );
    expect((await emu.call('GET', '/applications', { key: managementKey })).status).toBe(200);
    expect((await emu.call('GET', '/tokens/kept', { key: privateKey })).status).toBe(200);
    // The credentials file still holds the keys that work.
    const credentials = JSON.parse(await readFile(path.join(first.dir, '.svc', 'credentials.json'), 'utf8')) as {
      management_key: string;
    };
    expect(credentials.management_key).toBe(managementKey);
  });

  it('starts with given keys after tenants.json was deleted (it used to fail as a bug)', async () => {
    const keys = { managementKey: 'given-management-key-01', privateKey: 'given-private-key-0001' };
    const first = await startEmulator(keys);
    await first.dispose();
    await rm(path.join(first.dir, '.svc', 'data', 'tenants.json'));
    const emu = await startEmulator({ dir: first.dir, ...keys });
    expect(emu.tenantId).toBe(first.tenantId);
    expect((await emu.call('GET', '/applications', { key: keys.managementKey })).body.pagination.total_items).toBe(2);
  });

  it('makes a new master.key for a store without tokens, and makes anew what was sealed under the old one', async () => {
    const first = await startEmulator();
    const proxy = await first.call('POST', '/proxies', {
      body: { name: 'billing', destination_url: 'https://api.example.com/v1' },
    });
    expect(proxy.status).toBe(201);
    await first.dispose();
    await rm(path.join(first.dir, '.svc', 'master.key'));

    const emu = await startEmulator({ dir: first.dir, managementKey: first.managementKey });
    const said = warnings(emu).join('\n');
    expect(said).toContain('master.key was missing');
    expect(said).toContain('webhook signing secret');
    expect(said).toContain('proxies billing have new keys');
    expect(emu.started.webhookSecret).not.toBe(first.started.webhookSecret);
    const shown = await emu.call('GET', `/proxies/${proxy.body.id}`);
    expect(shown.status).toBe(200);
    expect(shown.body.key).toMatch(/^proxy_local_/);
    expect(shown.body.key).not.toBe(proxy.body.key);
    await emu.dispose();

    // Not bricked: every later start works, with the same secret.
    const again = await startEmulator({ dir: first.dir });
    expect(again.started.webhookSecret).toBe(emu.started.webhookSecret);
    expect(warnings(again)).toEqual([]);
  });

  it('makes nothing anew when the disk refuses that write: the new master.key goes too, and the next start makes it all anew', async () => {
    const first = await startEmulator();
    const proxy = await first.call('POST', '/proxies', {
      body: { name: 'billing', destination_url: 'https://api.example.com/v1', configuration: { api_key: 'k1' } },
    });
    expect(proxy.status).toBe(201);
    await first.dispose();
    const keyFile = path.join(first.dir, '.svc', 'master.key');
    await rm(keyFile);
    const proxies = path.join(first.dir, '.svc', 'data', 'proxies.json');
    const before = await readFile(proxies, 'utf8');

    const fs = new FaultyFileSystem();
    fs.failWrites((file) => file.includes(`${path.sep}journal${path.sep}`));
    await expect(startEmulator({ dir: first.dir, managementKey: first.managementKey, fileSystem: fs })).rejects.toThrow(
      /disk is full/,
    );
    // Kept, the key would make the next start take the old seals for its own and fail on them.
    await expect(stat(keyFile)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readFile(proxies, 'utf8')).toBe(before);

    const emu = await startEmulator({ dir: first.dir, managementKey: first.managementKey });
    const said = warnings(emu).join('\n');
    expect(said).toContain('proxies billing have new keys');
    expect(said).toContain('configuration of proxies billing is emptied');
    const shown = await emu.call('GET', `/proxies/${proxy.body.id}`);
    expect(shown.status).toBe(200);
    expect(shown.body.configuration).toBeNull();
  });

  it('refuses a store whose only tokens are staged in a transaction when its master.key is gone', async () => {
    const first = await startEmulator();
    const transaction = await first.call('POST', '/transactions', { key: first.privateKey, body: {} });
    expect(transaction.status, transaction.text).toBe(201);
    const staged = await first.call('POST', '/tokens', {
      key: first.privateKey,
      headers: { 'svc-transaction-id': transaction.body.id },
      body: { type: 'token', data: 'x' },
    });
    expect(staged.status, staged.text).toBe(201);
    await first.dispose();
    await rm(path.join(first.dir, '.svc', 'master.key'));
    await expect(startEmulator({ dir: first.dir })).rejects.toThrow(/holds tokens but its master key .* is missing/);
    await expect(stat(path.join(first.dir, '.svc', 'master.key'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a store with tokens whose master.key is gone, saying how to recover', async () => {
    const first = await startEmulator();
    await first.call('POST', '/tokens', { key: first.privateKey, body: { type: 'token', data: 'x' } });
    await first.dispose();
    await rm(path.join(first.dir, '.svc', 'master.key'));
    await expect(startEmulator({ dir: first.dir })).rejects.toThrow(
      /holds tokens but its master key .* is missing.*Restore master\.key from a backup, or pass it as options\.masterKey/,
    );
  });
});

describe('a real small disk (tmpfs)', () => {
  it('answers 503 while the disk is full, serves nothing of the failed write, and saves the retry once there is room', async (context) => {
    const disk = await mountTmpfs(context, 1024);
    const emu = await startEmulator({ dir: disk });
    const key = emu.privateKey;
    // The bootstrap's journal entries are written into their files and removed first: removed after
    // the filler, they would free the room the write below must not find.
    const journal = path.join(disk, '.svc', 'data', 'journal');
    await expect.poll(async () => (await readdir(journal).catch(() => [])).length, { timeout: 20_000 }).toBe(0);
    // Fill what is left of the disk.
    const filler = path.join(disk, 'filler');
    await writeFile(filler, Buffer.alloc(4096 * 1024)).catch(() => {});

    const failed = await emu.call('POST', '/tokens', {
      key,
      body: { id: 'full', type: 'token', data: 'x'.repeat(2000) },
    });
    expect(failed.status, failed.text).toBe(503);
    expect(failed.body.detail).toContain('the disk is full (ENOSPC)');
    expect((await emu.call('GET', '/tokens/full', { key })).status).toBe(404);

    await rm(filler);
    const retried = await emu.call('POST', '/tokens', {
      key,
      body: { id: 'full', type: 'token', data: 'x'.repeat(2000) },
    });
    expect(retried.status, retried.text).toBe(201);
    await emu.dispose();
    const again = await startEmulator({ dir: disk, privateKey: key });
    expect((await again.call('GET', '/tokens/full', { key })).status).toBe(200);
  });

  it('names the file and the cause when the disk is full at start', async (context) => {
    const disk = await mountTmpfs(context, 256);
    await writeFile(path.join(disk, 'filler'), Buffer.alloc(1024 * 1024)).catch(() => {});
    const failure = await startEmulator({ dir: disk }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toMatch(
      new RegExp(`Cannot write ${disk}/\\S+: the disk is full \\(ENOSPC\\); free some disk space`),
    );
  });

  it('names the file and the cause when the data folder is read-only at start', async (context) => {
    const disk = await mountTmpfs(context, 1024);
    await (await startEmulator({ dir: disk })).dispose();
    remount(disk, 'ro');
    const failure = await startEmulator({ dir: disk }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toBe(
      `Cannot write ${disk}/.svc/data.json.lock: the file system is read-only (EROFS); make the data folder writable (or give another options.data, or options.inMemory).`,
    );
    remount(disk, 'rw');
  });
});
