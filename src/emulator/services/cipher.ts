import { createCipheriv, createDecipheriv, randomBytes, randomFillSync } from 'node:crypto';
import { open, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { MASTER_KEY_FILE } from '../../api/defaults.js';
import { EmulatorError } from '../errors.js';
import { cannotWrite } from '../store/errors.js';
import { FILE_MODE, describeCause } from '../store/io.js';

/** AES-256-GCM ciphertext as stored: base64 fields, never plaintext. */
export interface Sealed {
  iv: string;
  tag: string;
  ct: string;
}

const IV_BYTES = 12;
/** IVs are cut from a pool of random bytes, refilled when spent: one call to the CSPRNG per 256 seals. */
const IV_POOL_SIZE = IV_BYTES * 256;

/**
 * Encrypts token data at rest with AES-256-GCM. Each value is bound (as associated data) to the
 * tenant and token it belongs to, so a ciphertext moved to another record fails to decrypt.
 *
 * What was opened is remembered beside its ciphertext object (a WeakMap: it goes when the record
 * does), so that reading a token again costs a JSON.parse, not a decryption. A seal is not
 * remembered: most tokens written are not read back at once, and each entry is work for the
 * garbage collector. Records are replaced, never changed in place, so a remembered text cannot go
 * stale. The plaintext stays in the heap of the process that holds the master key anyway; nothing
 * more reaches the disk.
 */
export class Cipher {
  private readonly opened = new WeakMap<Sealed, { context: string; text: string }>();
  private ivPool = Buffer.alloc(0);
  private ivOffset = 0;

  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new EmulatorError('The master key must be 32 bytes (base64 of 32 random bytes).');
  }

  seal(value: unknown, context: string): Sealed {
    const iv = this.nextIv();
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context));
    const ct = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), ct: ct.toString('base64') };
  }

  open<T>(sealed: Sealed, context: string): T {
    const known = this.opened.get(sealed);
    if (known?.context === context) return JSON.parse(known.text) as T;
    // A fixed tag length: GCM would otherwise accept a tag cut down to 4 bytes.
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(sealed.iv, 'base64'), { authTagLength: 16 });
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    const text = Buffer.concat([decipher.update(Buffer.from(sealed.ct, 'base64')), decipher.final()]).toString('utf8');
    this.opened.set(sealed, { context, text });
    return JSON.parse(text) as T;
  }

  private nextIv(): Buffer {
    if (this.ivOffset + IV_BYTES > this.ivPool.length) {
      this.ivPool = randomFillSync(Buffer.allocUnsafe(IV_POOL_SIZE));
      this.ivOffset = 0;
    }
    const iv = this.ivPool.subarray(this.ivOffset, this.ivOffset + IV_BYTES);
    this.ivOffset += IV_BYTES;
    return iv;
  }
}

/**
 * The master key: `SVC_MASTER_KEY` (base64, 32 bytes) when given; else `master.key` (0600) beside
 * the data file, created on first start; in memory, a fresh random key.
 */
export async function loadMasterKey(dir: string | undefined, fromEnv: string | undefined): Promise<{ key: Buffer; created: boolean }> {
  if (fromEnv !== undefined) {
    const key = Buffer.from(fromEnv, 'base64');
    if (key.length !== 32) throw new EmulatorError('SVC_MASTER_KEY must be the base64 of exactly 32 bytes (e.g. `openssl rand -base64 32`).');
    return { key, created: false };
  }
  if (dir === undefined) return { key: randomBytes(32), created: true };
  const file = path.join(dir, MASTER_KEY_FILE);
  try {
    const key = Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
    if (key.length !== 32) throw new EmulatorError(`${file} does not hold a base64 32-byte key; restore it from a backup (tokens cannot be read without it).`);
    return { key, created: false };
  } catch (error) {
    if (error instanceof EmulatorError) throw error;
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new EmulatorError(`Cannot read ${file}: ${describeCause(error)}.`);
  }
  const key = randomBytes(32);
  try {
    // 'wx': never overwrite a key that appeared meanwhile; losing it would lose every token.
    const handle = await open(file, 'wx', FILE_MODE);
    try {
      await handle.writeFile(key.toString('base64'));
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    // A key file cut short (a full disk) must not be taken for the key at the next start.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') await unlink(file).catch(() => {});
    throw cannotWrite(file, error);
  }
  return { key, created: true };
}
