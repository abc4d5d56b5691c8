import { randomBytes } from 'node:crypto';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EmulatorError } from '../../../src/emulator/errors.js';
import { MASTER_KEY_FILE } from '../../../src/api/defaults.js';
import { Cipher, loadMasterKey, type Sealed } from '../../../src/emulator/services/cipher.js';
import { tempDir } from '../../helpers/temp.js';

const CONTEXT = 'tenant-1/token-1';

/** Flips one bit of a base64 field. */
function flip(base64: string, index = 0): string {
  const bytes = Buffer.from(base64, 'base64');
  bytes[index] = bytes[index]! ^ 0x01;
  return bytes.toString('base64');
}

describe('Cipher', () => {
  it.each([
    ['a string', 'my secret value'],
    ['an object', { number: '4242424242424242', expiration_month: 12, nested: { list: [1, 'two', null] } }],
    ['a number', 42.5],
    ['zero', 0],
    ['a boolean', false],
    ['null', null],
    ['an array', ['a', 1, { b: true }]],
    ['unicode', 'snowman ☃ and emoji 🔐'],
    ['an empty string', ''],
  ])('round-trips %s', (_name, value) => {
    const cipher = new Cipher(randomBytes(32));
    const sealed = cipher.seal(value, CONTEXT);
    expect(cipher.open(sealed, CONTEXT)).toEqual(value);
  });

  it('seals into base64 iv, tag and ciphertext only', () => {
    const sealed = new Cipher(randomBytes(32)).seal({ a: 1 }, CONTEXT);
    expect(Object.keys(sealed).sort()).toEqual(['ct', 'iv', 'tag']);
    expect(Buffer.from(sealed.iv, 'base64')).toHaveLength(12);
    expect(Buffer.from(sealed.tag, 'base64')).toHaveLength(16);
    for (const field of Object.values(sealed)) expect(field).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
  });

  it('leaves no plaintext in the sealed form', () => {
    const secret = 'SuperSecretCardholder4242424242424242';
    const sealed = new Cipher(randomBytes(32)).seal({ holder: secret }, CONTEXT);
    const json = JSON.stringify(sealed);
    expect(json).not.toContain(secret);
    expect(json).not.toContain('4242424242424242');
    expect(json).not.toContain('holder');
    // Not merely base64 of the plaintext either.
    expect(Buffer.from(sealed.ct, 'base64').toString('utf8')).not.toContain(secret);
    expect(json).not.toContain(Buffer.from(secret).toString('base64').slice(0, 16));
  });

  it('gives two different seals for the same value (a fresh IV each time)', () => {
    const cipher = new Cipher(randomBytes(32));
    const first = cipher.seal('same', CONTEXT);
    const second = cipher.seal('same', CONTEXT);
    expect(first.iv).not.toBe(second.iv);
    expect(first.ct).not.toBe(second.ct);
    expect(cipher.open(first, CONTEXT)).toBe('same');
    expect(cipher.open(second, CONTEXT)).toBe('same');
  });

  it('never repeats an IV, across refills of its pool of random bytes', () => {
    const cipher = new Cipher(randomBytes(32));
    const seals = Array.from({ length: 1000 }, (_, i) => cipher.seal(i, CONTEXT));
    expect(new Set(seals.map((sealed) => sealed.iv)).size).toBe(1000);
    expect(seals.map((sealed) => cipher.open(sealed, CONTEXT))).toEqual(Array.from({ length: 1000 }, (_, i) => i));
  });

  it('gives a fresh value on every open: changing one does not change the next', () => {
    const cipher = new Cipher(randomBytes(32));
    const sealed = cipher.seal({ list: [1] }, CONTEXT);
    const first = cipher.open<{ list: number[] }>(sealed, CONTEXT);
    first.list.push(2);
    expect(cipher.open(sealed, CONTEXT)).toEqual({ list: [1] });
  });

  it('refuses to open with another context', () => {
    const cipher = new Cipher(randomBytes(32));
    const sealed = cipher.seal('bound', 'tenant-1/token-1');
    expect(() => cipher.open(sealed, 'tenant-1/token-2')).toThrow();
    expect(() => cipher.open(sealed, 'tenant-2/token-1')).toThrow();
    expect(() => cipher.open(sealed, '')).toThrow();
    expect(cipher.open(sealed, 'tenant-1/token-1')).toBe('bound');
  });

  it('refuses to open with another key', () => {
    const sealed = new Cipher(randomBytes(32)).seal('secret', CONTEXT);
    expect(() => new Cipher(randomBytes(32)).open(sealed, CONTEXT)).toThrow();
  });

  it('opens with another Cipher built on the same key', () => {
    const key = randomBytes(32);
    const sealed = new Cipher(key).seal({ v: 1 }, CONTEXT);
    expect(new Cipher(Buffer.from(key)).open(sealed, CONTEXT)).toEqual({ v: 1 });
  });

  it('refuses a tampered ciphertext, tag or iv', () => {
    const cipher = new Cipher(randomBytes(32));
    const sealed = cipher.seal({ amount: 100 }, CONTEXT);
    const tampered: Sealed[] = [
      { ...sealed, ct: flip(sealed.ct) },
      { ...sealed, ct: flip(sealed.ct, Buffer.from(sealed.ct, 'base64').length - 1) },
      { ...sealed, tag: flip(sealed.tag) },
      { ...sealed, tag: flip(sealed.tag, 15) },
      { ...sealed, iv: flip(sealed.iv) },
    ];
    for (const candidate of tampered) expect(() => cipher.open(candidate, CONTEXT)).toThrow();
    expect(cipher.open(sealed, CONTEXT)).toEqual({ amount: 100 });
  });

  it('refuses a ciphertext swapped from another record', () => {
    const cipher = new Cipher(randomBytes(32));
    const a = cipher.seal('A', CONTEXT);
    const b = cipher.seal('B', CONTEXT);
    expect(() => cipher.open({ ...a, ct: b.ct }, CONTEXT)).toThrow();
  });

  it.each([0, 16, 24, 31, 33, 64])('refuses a key of %i bytes', (length) => {
    expect(() => new Cipher(randomBytes(length))).toThrow(EmulatorError);
    expect(() => new Cipher(randomBytes(length))).toThrow(/32 bytes/);
  });
});

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
  ])('refuses an environment key of %s, naming SVC_MASTER_KEY', async (_name, fromEnv) => {
    const dir = await tempDir();
    await expect(loadMasterKey(dir, fromEnv)).rejects.toThrow(EmulatorError);
    await expect(loadMasterKey(dir, fromEnv)).rejects.toThrow(/SVC_MASTER_KEY/);
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
});
