/** A real HTTPS destination on 127.0.0.1 (a throwaway self-signed certificate) whose handler a test writes. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';
import { selfSigned } from '../../helpers/tls.js';

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
