import { hash, randomBytes } from 'node:crypto';
import type { ApplicationType } from '../../api/permissions.js';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const TYPE_TAG: Record<ApplicationType, string> = { private: 'pvt', public: 'pub', management: 'mgt' };

/** 22 base58 characters carry 128 bits of entropy. */
const SECRET_LENGTH = 22;

/** `key_<env>_<pvt|pub|mgt>_<22 base58>` (DESIGN.md section 2); the emulator's env is `local`. */
export function generateKey(type: ApplicationType, env = 'local'): string {
  return `key_${env}_${TYPE_TAG[type]}_${randomBase58(SECRET_LENGTH)}`;
}

/** Uniform base58: bytes at or above 232 (4 x 58) are dropped so that `% 58` has no bias. */
export function randomBase58(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 232 && out.length < length) out += BASE58[byte % 58];
    }
  }
  return out;
}

/** Keys are stored and looked up only as SHA-256 (hex). */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** How many keys a KeyHashes remembers: more than the keys a busy run uses, little memory. */
const REMEMBERED_KEYS = 1024;

/**
 * hashKey for the keys of requests, remembered: each request names its key (a proxy call two), and
 * SHA-256 is most of the work of finding one. Bounded: past its size, what it remembered is
 * dropped and learned again. It remembers hashes of keys callers sent, never keys it was not given.
 */
export class KeyHashes {
  private readonly hashes = new Map<string, string>();

  of(key: string): string {
    let hashed = this.hashes.get(key);
    if (hashed === undefined) {
      if (this.hashes.size >= REMEMBERED_KEYS) this.hashes.clear();
      this.hashes.set(key, (hashed = hashKey(key)));
    }
    return hashed;
  }
}
