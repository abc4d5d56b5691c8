/** A throwaway self-signed certificate for 127.0.0.1, made once per test file (openssl takes a moment). */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from './temp.js';

let made: Promise<{ key: Buffer; cert: string }> | undefined;

export function selfSigned(): Promise<{ key: Buffer; cert: string }> {
  made ??= (async () => {
    const dir = await tempDir('svc-tls-');
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(key), cert: readFileSync(cert, 'utf8') };
  })();
  return made;
}
