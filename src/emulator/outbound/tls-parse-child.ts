/**
 * The process that parses user code's TLS material for the emulator (tls-parser.ts), so that work
 * no byte count bounds (an encrypted key's PBKDF2 count is the key's to choose) never runs on the
 * emulator's thread: killed when it runs out of time, which no worker thread can be (its thread
 * would go on deriving the key until the count is reached).
 *
 * A message is one set of material; the answer is the key decrypted (so that the emulator's own
 * context is made with no passphrase to derive from), or the error Node gave.
 */
import { createPrivateKey } from 'node:crypto';
import tls from 'node:tls';
import type { TlsMaterial, TlsOutcome } from './tls-parser.js';

function parse(material: TlsMaterial): TlsOutcome {
  try {
    const { key, passphrase, minVersion, maxVersion, ...rest } = material;
    const plain =
      key !== undefined && passphrase !== undefined
        ? (createPrivateKey({ key, passphrase }).export({ type: 'pkcs8', format: 'pem' }) as string)
        : key;
    // The whole context once here: whatever it finds wrong (a key not of its certificate, a CA
    // that is not one, ciphers not known) is found before the emulator makes its own.
    tls.createSecureContext({
      ...rest,
      ...(plain !== undefined && { key: plain }),
      ...(minVersion !== undefined && { minVersion: minVersion as tls.SecureVersion }),
      ...(maxVersion !== undefined && { maxVersion: maxVersion as tls.SecureVersion }),
    });
    return plain === undefined ? { ok: true } : { ok: true, key: plain };
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    return { ok: false, code: typeof code === 'string' ? code : 'ERR_SVC_TLS_INVALID', message: String(message) };
  }
}

process.on('message', (message: TlsMaterial & { id: number }) => {
  const { id, ...material } = message;
  process.send!({ id, ...parse(material) });
});
process.send!({ ready: true });
