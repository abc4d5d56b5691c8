import { readFile, unlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PROBLEM_TYPES } from '../../src/api/problem.js';
import { createEmulator } from '../../src/emulator/index.js';
import { nodeFileSystem } from '../../src/lib/durable-file.js';
import { http, startEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/wait.js';

/** A port held by another listener for the rest of the test. */
async function takenPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as { port: number }).port;
}

const credentialsOf = async (dir: string) =>
  JSON.parse(await readFile(path.join(dir, '.svc', 'credentials.json'), 'utf8')) as Record<string, string>;

describe('keys of the bootstrap tenant are never lost', () => {
  it('a first start on a port in use writes no tenant: the next start creates it, and shows and saves its keys', async () => {
    const dir = await tempDir();
    const data = path.join(dir, '.svc', 'data.json');
    const busy = createEmulator({ port: await takenPort(), data });
    await expect(busy.ready).rejects.toThrow(/already in use/);
    await busy.dispose();

    const emulator = createEmulator({ port: 0, data });
    const started = await emulator.ready;
    try {
      expect(started.bootstrap.created).toBe(true);
      expect(started.bootstrap.generated.managementKey).toMatch(/^key_local_mgt_/);
      expect(started.bootstrap.generated.privateKey).toMatch(/^key_local_pvt_/);
      const credentials = await credentialsOf(dir);
      expect(credentials.management_key).toBe(started.bootstrap.generated.managementKey);
      expect(credentials.private_key).toBe(started.bootstrap.generated.privateKey);
      expect((await http(`${started.url}/applications`, 'GET', { key: credentials.management_key })).status).toBe(200);
    } finally {
      await emulator.dispose();
    }
  });

  it('listens before it bootstraps, and answers 503 until the bootstrap is done', async () => {
    const dir = await tempDir();
    // The store's writes wait until released: the bootstrap's write holds the start half-way.
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const fileSystem = {
      ...nodeFileSystem,
      writeNew: async (file: string, text: string) => {
        await released;
        await nodeFileSystem.writeNew(file, text);
      },
    };
    const emulator = createEmulator({ port: 0, data: path.join(dir, '.svc', 'data.json'), fileSystem });
    try {
      const url = await eventually(() => {
        expect(emulator.url).toBeDefined();
        return emulator.url!;
      });
      const early = await http(`${url}/health`, 'GET');
      expect(early.status).toBe(503);
      expect(early.headers['retry-after']).toBe('1');
      expect(early.body).toMatchObject({
        status: 503,
        type: PROBLEM_TYPES.unavailable,
        detail: expect.stringMatching(/starting/),
      });
      release();
      expect((await emulator.ready).url).toBe(url);
      expect((await http(`${url}/health`, 'GET')).status).toBe(200);
    } finally {
      release();
      await emulator.dispose();
    }
  });

  it('a store whose bootstrap keys are in neither credentials.json nor the options says so, and how to recover', async () => {
    const first = await startEmulator();
    const oldKey = first.managementKey;
    await first.dispose();
    await unlink(path.join(first.dir, '.svc', 'credentials.json'));

    const lost = await startEmulator({ dir: first.dir });
    const warnings = lost.events
      .filter((event) => event.type === 'warning')
      .map((event) => (event as { message: string }).message);
    expect(warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/key of the bootstrap management Application .* options\.managementKey/),
      ]),
    );
    expect(warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/key of the bootstrap private Application .* options\.privateKey/),
      ]),
    );
    // The emulator names its option, never a CLI flag.
    for (const message of warnings) expect(message).not.toMatch(/--/);
    await lost.dispose();

    // The recovery: a key given for the bootstrap management Application replaces the lost one.
    const recovered = await startEmulator({ dir: first.dir, managementKey: 'recovered-management-key-1' });
    const warned = recovered.events
      .filter((event) => event.type === 'warning')
      .map((event) => (event as { message: string }).message);
    expect(warned.filter((message) => message.includes('management Application'))).toEqual([]);
    expect((await recovered.call('GET', '/applications', { key: 'recovered-management-key-1' })).status).toBe(200);
    expect((await recovered.call('GET', '/applications', { key: oldKey })).status).toBe(401);
    expect((await credentialsOf(first.dir)).management_key).toBe('recovered-management-key-1');
  });

  it('says nothing on a first start, nor when the keys are in credentials.json', async () => {
    const first = await startEmulator();
    expect(first.events.filter((event) => event.type === 'warning')).toEqual([]);
    await first.dispose();
    const again = await startEmulator({ dir: first.dir });
    expect(again.events.filter((event) => event.type === 'warning')).toEqual([]);
  });
});
