import { randomBytes } from 'node:crypto';
import { chmod, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MASTER_KEY_FILE } from '../../../src/api/defaults.js';
import { Cipher } from '../../../src/emulator/crypto/cipher.js';
import { EmulatorError } from '../../../src/emulator/errors.js';
import { loadMasterKey } from '../../../src/emulator/store/master-key.js';
import { startEmulator } from '../../helpers/emulator.js';
import { tempDir } from '../../helpers/temp.js';

const CONTEXT = 'tenant-1/token-1';

describe('loadMasterKey', () => {
  it('creates master.key (0600, base64 of 32 bytes) on first call, then returns the same key', async () => {
    const dir = await tempDir();
    const first = await loadMasterKey(dir, undefined);
    expect(first.created).toBe(true);
    expect(first.key).toHaveLength(32);

    const file = path.join(dir, MASTER_KEY_FILE);
    expect(MASTER_KEY_FILE).toBe('master.key');
    const text = await readFile(file, 'utf8');
    expect(text.trim()).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(text, 'base64').equals(first.key)).toBe(true);
    if (process.platform !== 'win32') expect((await stat(file)).mode & 0o777).toBe(0o600);

    const second = await loadMasterKey(dir, undefined);
    expect(second.created).toBe(false);
    expect(second.key.equals(first.key)).toBe(true);
    expect(await readFile(file, 'utf8')).toBe(text);
  });

  it('creates a different key in each folder', async () => {
    const a = await loadMasterKey(await tempDir(), undefined);
    const b = await loadMasterKey(await tempDir(), undefined);
    expect(a.key.equals(b.key)).toBe(false);
  });

  it('reads a key file with a trailing newline', async () => {
    const dir = await tempDir();
    const key = randomBytes(32);
    await writeFile(path.join(dir, MASTER_KEY_FILE), `${key.toString('base64')}\n`);
    const loaded = await loadMasterKey(dir, undefined);
    expect(loaded.created).toBe(false);
    expect(loaded.key.equals(key)).toBe(true);
  });

  it('keeps the key working across loads: a value sealed before opens after', async () => {
    const dir = await tempDir();
    const sealed = new Cipher((await loadMasterKey(dir, undefined)).key).seal('persisted', CONTEXT);
    expect(new Cipher((await loadMasterKey(dir, undefined)).key).open(sealed, CONTEXT)).toBe('persisted');
  });

  it('uses a key from the environment as it is and writes no file', async () => {
    const dir = await tempDir();
    const key = randomBytes(32);
    const loaded = await loadMasterKey(dir, key.toString('base64'));
    expect(loaded.created).toBe(false);
    expect(loaded.key.equals(key)).toBe(true);
    expect(await readdir(dir)).toEqual([]);
  });

  it('prefers the environment key over an existing key file', async () => {
    const dir = await tempDir();
    const fromFile = await loadMasterKey(dir, undefined);
    const key = randomBytes(32);
    const loaded = await loadMasterKey(dir, key.toString('base64'));
    expect(loaded.key.equals(key)).toBe(true);
    expect(loaded.key.equals(fromFile.key)).toBe(false);
  });

  it.each([
    ['16 bytes', randomBytes(16).toString('base64')],
    ['33 bytes', randomBytes(33).toString('base64')],
    ['an empty string', ''],
  ])('refuses a given key of %s, naming options.masterKey', async (_name, fromEnv) => {
    const dir = await tempDir();
    await expect(loadMasterKey(dir, fromEnv)).rejects.toThrow(EmulatorError);
    await expect(loadMasterKey(dir, fromEnv)).rejects.toThrow(/options\.masterKey/);
    expect(await readdir(dir)).toEqual([]);
  });

  it.each([
    ['too short', randomBytes(16).toString('base64')],
    ['empty', ''],
    ['not base64', '!!!! this is not a key !!!!'],
  ])('refuses a corrupt key file (%s), naming the file, and leaves it in place', async (_name, content) => {
    const dir = await tempDir();
    const file = path.join(dir, MASTER_KEY_FILE);
    await writeFile(file, content);
    const load = loadMasterKey(dir, undefined);
    await expect(load).rejects.toThrow(EmulatorError);
    await expect(loadMasterKey(dir, undefined)).rejects.toThrow(file);
    expect(await readFile(file, 'utf8')).toBe(content);
  });

  it('gives a random in-memory key when there is no folder', async () => {
    const a = await loadMasterKey(undefined, undefined);
    const b = await loadMasterKey(undefined, undefined);
    expect(a.key).toHaveLength(32);
    expect(b.key).toHaveLength(32);
    expect(a.key.equals(b.key)).toBe(false);
    expect(() => new Cipher(a.key)).not.toThrow();
  });

  it('uses the environment key when there is no folder', async () => {
    const key = randomBytes(32);
    const loaded = await loadMasterKey(undefined, key.toString('base64'));
    expect(loaded.key.equals(key)).toBe(true);
    expect(loaded.created).toBe(false);
  });

  it.skipIf(process.platform === 'win32')(
    'makes a master.key others may read owner-only, and says so once',
    async () => {
      const dir = await tempDir();
      const { key } = await loadMasterKey(dir, undefined);
      const file = path.join(dir, MASTER_KEY_FILE);
      await chmod(file, 0o644);

      const loaded = await loadMasterKey(dir, undefined);
      expect(loaded.key.equals(key)).toBe(true);
      expect(loaded.notice).toBe(
        `${file} could be read by other users (mode 0644); svc made it owner-only (0600). ` +
          'Anyone who read it meanwhile can read every token sealed with it.',
      );
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      // Owner-only now: nothing more to say.
      expect((await loadMasterKey(dir, undefined)).notice).toBeUndefined();
    },
  );
});

describe('a world-readable master.key at start', () => {
  it.skipIf(process.platform === 'win32')('is made 0600 and the start warns about it', async () => {
    const first = await startEmulator();
    await first.dispose();
    const file = path.join(first.dir, '.svc', MASTER_KEY_FILE);
    await chmod(file, 0o640);
    const again = await startEmulator({ dir: first.dir });
    const warnings = again.events.filter((event) => event.type === 'warning').map((event) => event.message);
    expect(warnings).toContain(
      `${file} could be read by other users (mode 0640); svc made it owner-only (0600). ` +
        'Anyone who read it meanwhile can read every token sealed with it.',
    );
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });
});
