/**
 * How a state file's secrets are sealed: with a passphrase, so that any svc given it opens the file
 * (another machine, an emulator with another master key, an in-memory one). scrypt derives a key
 * from the passphrase and the file's random salt; each entry's secret fields are sealed together
 * with AES-256-GCM, bound to the entry's kind and id (a sealed value moved to another entry does
 * not open). A known text sealed in the header tells a wrong passphrase from a damaged entry.
 */
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';

export interface SealHeader {
  cipher: 'aes-256-gcm';
  kdf: 'scrypt';
  n: number;
  r: number;
  p: number;
  salt: string;
  /** `svc-state` sealed with the key: opens only with the right passphrase. */
  check: string;
}

const CHECK_TEXT = 'svc-state';
const SCRYPT = { n: 1 << 15, r: 8, p: 1 };

/** The passphrase does not open the file, or an entry is damaged: one line for the user. */
export class SealError extends Error {}

export class StateSeal {
  private constructor(
    private readonly key: Buffer,
    readonly header: SealHeader,
  ) {}

  static create(passphrase: string): StateSeal {
    const salt = randomBytes(16);
    const key = derive(passphrase, salt, SCRYPT);
    const header: SealHeader = {
      cipher: 'aes-256-gcm',
      kdf: 'scrypt',
      ...SCRYPT,
      salt: salt.toString('base64'),
      check: '',
    };
    const seal = new StateSeal(key, header);
    header.check = seal.seal(CHECK_TEXT, 'check');
    return seal;
  }

  /** The seal of a file's header, or a SealError when the passphrase is not the one it was sealed with. */
  static open(passphrase: string, header: unknown): StateSeal {
    const given = header as Partial<SealHeader> | null;
    if (
      typeof given !== 'object' ||
      given === null ||
      given.cipher !== 'aes-256-gcm' ||
      given.kdf !== 'scrypt' ||
      typeof given.salt !== 'string' ||
      typeof given.check !== 'string' ||
      !withinCost(given)
    )
      throw new SealError('its "sealed" header is not one this svc knows (aes-256-gcm, scrypt)');
    let key: Buffer;
    try {
      key = derive(passphrase, Buffer.from(given.salt, 'base64'), given);
    } catch (error) {
      throw new SealError(`its scrypt parameters cannot be used (${(error as Error).message})`);
    }
    const seal = new StateSeal(key, given as SealHeader);
    let check: unknown;
    try {
      check = seal.open(given.check, 'check');
    } catch {
      check = undefined;
    }
    if (check !== CHECK_TEXT) throw new SealError('the passphrase does not open it (SVC_STATE_PASSPHRASE)');
    return seal;
  }

  /** `value` as JSON, sealed and bound to `context`: `<iv>.<tag>.<ciphertext>`, base64. */
  seal(value: unknown, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context));
    const ct = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return [iv, cipher.getAuthTag(), ct].map((part) => part.toString('base64')).join('.');
  }

  open(sealed: string, context: string): unknown {
    const [iv, tag, ct] = sealed.split('.').map((part) => Buffer.from(part, 'base64'));
    if (!iv || !tag || !ct || iv.length !== 12 || tag.length !== 16) throw new SealError('malformed');
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(tag);
    return JSON.parse(Buffer.concat([decipher.update(ct), decipher.final()]).toString('utf8'));
  }
}

/**
 * scrypt's cost as a file may give it: N a power of two, and N * r * p at most 2^23 (this svc writes
 * 2^18; 2^23 is about a GiB of memory and seconds of work). A file is read before it is trusted, and
 * a higher cost would hold the command for hours or ask for more memory than there is.
 */
function withinCost(given: Partial<SealHeader>): given is Partial<SealHeader> & { n: number; r: number; p: number } {
  const { n, r, p } = given;
  if (![n, r, p].every((value) => Number.isInteger(value) && (value as number) > 0)) return false;
  const cost = given as { n: number; r: number; p: number };
  return cost.n >= 2 && (cost.n & (cost.n - 1)) === 0 && cost.n * cost.r * cost.p <= 1 << 23;
}

function derive(passphrase: string, salt: Buffer, cost: { n: number; r: number; p: number }): Buffer {
  return scryptSync(passphrase.normalize('NFC'), salt, 32, {
    N: cost.n,
    r: cost.r,
    p: cost.p,
    maxmem: 256 * cost.n * cost.r + 1024 * 1024,
  });
}
