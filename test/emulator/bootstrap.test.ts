import { readFile, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PERMISSIONS_BY_TYPE } from '../../src/api/permissions.js';
import { createEmulator } from '../../src/emulator/index.js';
import { http, startEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

const mode = async (file: string) => (await stat(file)).mode & 0o777;

describe('bootstrap', () => {
  it('creates a tenant with a management and a private Application on an empty store', async () => {
    const emu = await startEmulator();
    const { bootstrap } = emu.started;
    expect(bootstrap.created).toBe(true);
    expect(bootstrap.generated.managementKey).toMatch(/^key_local_mgt_/);
    expect(bootstrap.generated.privateKey).toMatch(/^key_local_pvt_/);

    const management = await http(`${emu.url}/applications/key`, 'GET', { key: emu.managementKey });
    expect(management.body).toMatchObject({
      type: 'management',
      permissions: [...PERMISSIONS_BY_TYPE.management],
      tenant_id: emu.tenantId,
    });
    const apps = (await emu.call('GET', '/applications')).body.data;
    const priv = apps.find((app: { type: string }) => app.type === 'private');
    expect(priv.permissions).toEqual([...PERMISSIONS_BY_TYPE.private]);
    expect(priv.permissions).toEqual(
      expect.arrayContaining(['token:create', 'token:read', 'token:use', 'token:delete']),
    );
  });

  it('writes the URL and both keys to .svc/credentials.json, mode 0600, and every store file 0600', async () => {
    const emu = await startEmulator();
    const file = path.join(emu.dir, '.svc', 'credentials.json');
    expect(emu.started.credentialsFile).toBe(file);
    const credentials = JSON.parse(await readFile(file, 'utf8'));
    expect(credentials).toEqual({
      url: emu.url,
      tenant_id: emu.tenantId,
      management_key: emu.managementKey,
      private_key: emu.privateKey,
    });
    expect(await mode(file)).toBe(0o600);
    expect(await mode(path.join(emu.dir, '.svc'))).toBe(0o700);
    expect(await mode(emu.data!)).toBe(0o600);
    const entries = await readdir(path.join(emu.dir, '.svc', 'data'), { recursive: true, withFileTypes: true });
    expect(entries.filter((entry) => entry.isFile()).length).toBeGreaterThanOrEqual(2);
    for (const entry of entries) {
      const file = path.join(entry.parentPath, entry.name);
      // The store's writes go on after the start (a temporary file renamed, a journal entry applied and
      // removed): a file gone since the listing is not a wrong mode.
      const found = await mode(file).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined;
        throw error;
      });
      if (found !== undefined) expect(found, file).toBe(entry.isDirectory() ? 0o700 : 0o600);
    }
  });

  it('stores keys only as SHA-256 hashes', async () => {
    const emu = await startEmulator();
    const created = (
      await emu.call('POST', '/applications', { body: { name: 'x', type: 'private', permissions: ['token:read'] } })
    ).body;
    await emu.dispose();
    const stored = await readFile(path.join(emu.dir, '.svc', 'data', 'applications.json'), 'utf8');
    for (const key of [emu.managementKey, emu.privateKey, created.key]) {
      expect(stored).not.toContain(key);
      const { createHash } = await import('node:crypto');
      expect(stored).toContain(createHash('sha256').update(key).digest('hex'));
    }
  });

  it('uses exactly the keys given, and generates none', async () => {
    const emu = await startEmulator({ managementKey: 'ci-management-key-0001', privateKey: 'ci-private-key-0001' });
    expect(emu.started.bootstrap.generated).toEqual({});
    expect((await http(`${emu.url}/applications`, 'GET', { key: 'ci-management-key-0001' })).status).toBe(200);
    expect((await http(`${emu.url}/applications`, 'GET', { key: 'ci-private-key-0001' })).status).toBe(403);
  });

  it('restarts on the same data with everything it had; every key still works', async () => {
    const dir = await tempDir();
    const first = await startEmulator({ dir });
    const created = (
      await first.call('POST', '/applications', {
        body: { name: 'kept', type: 'management', permissions: ['application:read'] },
      })
    ).body;
    const regenerated = (
      await first.call('POST', '/applications', {
        body: { name: 'regen', type: 'management', permissions: ['application:read'] },
      })
    ).body;
    const newKey = (await first.call('POST', `/applications/${regenerated.id}/regenerate`)).body.key;
    await first.dispose();

    const second = await startEmulator({ dir });
    expect(second.started.bootstrap.created).toBe(false);
    expect(second.tenantId).toBe(first.tenantId);
    // the generated keys of the first start are still in the credentials file, and still work
    const credentials = JSON.parse(await readFile(path.join(dir, '.svc', 'credentials.json'), 'utf8'));
    expect(credentials).toMatchObject({
      url: second.url,
      management_key: first.managementKey,
      private_key: first.privateKey,
    });
    expect((await http(`${second.url}/applications/key`, 'GET', { key: first.managementKey })).status).toBe(200);
    expect((await http(`${second.url}/applications/key`, 'GET', { key: created.key })).body.name).toBe('kept');
    expect((await http(`${second.url}/applications/key`, 'GET', { key: newKey })).body.name).toBe('regen');
    expect((await http(`${second.url}/applications/key`, 'GET', { key: regenerated.key })).status).toBe(401);
    const names = (await http(`${second.url}/applications`, 'GET', { key: first.managementKey })).body.data.map(
      (app: { name: string }) => app.name,
    );
    expect(names).toEqual(['svc management', 'svc private', 'kept', 'regen']);
  });

  it('applies keys given on a later start to the bootstrap Applications', async () => {
    const dir = await tempDir();
    const first = await startEmulator({ dir });
    await first.dispose();
    const second = await startEmulator({ dir, managementKey: 'later-management-key-01' });
    expect((await http(`${second.url}/applications`, 'GET', { key: 'later-management-key-01' })).status).toBe(200);
    expect((await http(`${second.url}/applications`, 'GET', { key: first.managementKey })).status).toBe(401);
    // the private key was not given: the generated one goes on working
    expect((await http(`${second.url}/applications`, 'GET', { key: first.privateKey })).status).toBe(403);
    const apps = (await http(`${second.url}/applications`, 'GET', { key: 'later-management-key-01' })).body.data;
    expect(apps.filter((app: { type: string }) => app.type === 'management')).toHaveLength(1);
  });

  it('in memory writes no file at all', async () => {
    const dir = await tempDir();
    const emu = await startEmulator({ dir, inMemory: true });
    await emu.call('POST', '/applications', { body: { name: 'x', type: 'private', permissions: ['token:read'] } });
    await emu.dispose();
    expect(await readdir(dir)).toEqual([]);
    expect(emu.started.credentialsFile).toBeUndefined();
  });
});

describe('start-up errors', () => {
  it('refuses a corrupt data file without touching it', async () => {
    const dir = await tempDir();
    const first = await startEmulator({ dir });
    await first.dispose();
    const file = path.join(dir, '.svc', 'data', 'applications.json');
    await writeFile(file, '{"version":1,"records":[{"id":');
    const emulator = createEmulator({ port: 0, data: first.data! });
    await expect(emulator.ready).rejects.toThrow(/applications\.json is not a valid svc data file.*left it untouched/);
    await emulator.dispose();
    expect(await readFile(file, 'utf8')).toBe('{"version":1,"records":[{"id":');
  });

  it('says which port is in use', async () => {
    const emu = await startEmulator({ inMemory: true });
    const port = Number(new URL(emu.url).port);
    const second = createEmulator({ port, inMemory: true });
    await expect(second.ready).rejects.toThrow(`Port ${port} on 127.0.0.1 is already in use`);
    await second.dispose();
  });

  it('rejects malformed given keys and options', async () => {
    const cases = [
      [{ managementKey: 'short' }, 'managementKey'],
      [{ privateKey: 'has spaces in it here' }, 'privateKey'],
      [{ port: 70000 }, 'port'],
      [{ managementKey: 'same-key-for-both-1', privateKey: 'same-key-for-both-1' }, 'privateKey'],
    ] as const;
    for (const [options, option] of cases) {
      const emulator = createEmulator({ inMemory: true, ...options });
      // The emulator names its own option (a library knows no CLI flags; svc serve maps them).
      await expect(emulator.ready, JSON.stringify(options)).rejects.toThrow(new RegExp(`^options\\.${option} `));
      await expect(emulator.ready).rejects.toMatchObject({ name: 'EmulatorError', option });
      await emulator.dispose();
    }
  });

  it('reports a failure of the start that is not its own (here a clock that gives no date) as an EmulatorError with its cause', async () => {
    const emulator = createEmulator({ inMemory: true, port: 0, clock: () => new Date(Number.NaN) });
    await expect(emulator.ready).rejects.toMatchObject({
      name: 'EmulatorError',
      message: 'The emulator could not start: Invalid time value',
      cause: expect.any(RangeError),
    });
    await emulator.dispose();
  });

  it('refuses a second emulator on the same data file', async () => {
    const emu = await startEmulator();
    const second = createEmulator({ port: 0, data: emu.data! });
    await expect(second.ready).rejects.toThrow(/in use by another svc serve/);
    await second.dispose();
    // the first one is unharmed
    expect((await emu.call('GET', '/applications')).status).toBe(200);
  });
});

describe('the master key', () => {
  it('refuses to start when tokens exist but master.key is gone, and leaves no new key behind', async () => {
    const dir = await tempDir();
    const first = await startEmulator({ dir });
    expect(
      (await first.call('POST', '/tokens', { key: first.privateKey, body: { type: 'token', data: 'x' } })).status,
    ).toBe(201);
    await first.dispose();
    const keyFile = path.join(dir, '.svc', 'master.key');
    const { unlink, access } = await import('node:fs/promises');
    await unlink(keyFile);
    const second = createEmulator({ port: 0, data: first.data! });
    await expect(second.ready).rejects.toThrow(/holds tokens but its master key .* is missing/);
    await second.dispose();
    await expect(access(keyFile)).rejects.toThrow(/ENOENT/);
  });
});

describe('the emulator as a library', () => {
  it('ready resolves to what started; url is undefined until then and never throws', async () => {
    const dir = await tempDir();
    const emulator = createEmulator({ port: 0, data: path.join(dir, '.svc', 'data.json') });
    expect(emulator.url).toBeUndefined();
    const started = await emulator.ready;
    try {
      expect(started).toEqual({
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
        bootstrap: {
          tenantId: expect.any(String),
          created: true,
          generated: expect.any(Object),
          keys: expect.any(Object),
        },
        credentialsFile: path.join(dir, '.svc', 'credentials.json'),
        tier: 'enterprise',
        webhookSecret: expect.any(String),
      });
      expect(emulator.url).toBe(started.url);
      expect((await http(`${started.url}/health`, 'GET')).status).toBe(200);
    } finally {
      await emulator.dispose();
    }
  });

  it('dispose is idempotent: called twice at once or again later, it stops once and the port is free', async () => {
    const emulator = createEmulator({ port: 0, inMemory: true });
    const { url } = await emulator.ready;
    const first = emulator.dispose();
    const second = emulator.dispose();
    await Promise.all([first, second]);
    await emulator.dispose();
    await expect(http(`${url}/health`, 'GET')).rejects.toThrow();
    // The same port can be taken again: the server is closed, not merely forgotten.
    const again = createEmulator({ port: Number(new URL(url).port), inMemory: true });
    await again.ready;
    await again.dispose();
  });

  it('a dispose during the start ends it: ready rejects with an EmulatorError and everything opened is closed', async () => {
    const dir = await tempDir();
    const data = path.join(dir, '.svc', 'data.json');
    const emulator = createEmulator({ port: 0, data });
    const disposed = emulator.dispose();
    await expect(emulator.ready).rejects.toMatchObject({ name: 'EmulatorError' });
    await disposed;
    expect(emulator.url).toBeUndefined();
    // The store's lock was released: the same data opens again.
    const again = createEmulator({ port: 0, data });
    await again.ready;
    await again.dispose();
  });

  it('a start that fails half-way closes what it opened: the store can be opened again', async () => {
    const dir = await tempDir();
    const data = path.join(dir, '.svc', 'data.json');
    const failed = createEmulator({ port: 0, data, clock: () => new Date(Number.NaN) });
    await expect(failed.ready).rejects.toMatchObject({ name: 'EmulatorError' });
    await failed.dispose();
    const again = createEmulator({ port: 0, data });
    await again.ready;
    await again.dispose();
  });
});
