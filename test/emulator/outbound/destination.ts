/** A real HTTPS destination on 127.0.0.1 (a throwaway self-signed certificate) whose handler a test writes. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { tempDir } from '../../helpers/temp.js';

let certificate: Promise<{ key: Buffer; cert: string }> | undefined;

/** One certificate for 127.0.0.1 per test file (openssl takes a moment). */
function selfSigned(): Promise<{ key: Buffer; cert: string }> {
  certificate ??= (async () => {
    const dir = await tempDir('svc-outbound-tls-');
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
  return certificate;
}

export interface HttpsDestination {
  url: string;
  port: number;
  /** The certificate to trust (`ca`). */
  ca: string;
}

/** Starts the destination; stopped when the test ends. */
export async function httpsDestination(
  handler: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<HttpsDestination> {
  const { key, cert } = await selfSigned();
  const server = https.createServer({ key, cert }, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `https://127.0.0.1:${port}`, port, ca: cert };
}

/** A request's body, read whole. */
export async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
