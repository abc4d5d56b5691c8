import { createCipheriv, createDecipheriv, randomFillSync } from 'node:crypto';
import { EmulatorError } from '../errors.js';

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
