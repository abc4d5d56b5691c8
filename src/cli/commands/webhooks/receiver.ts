/**
 * `svc webhooks listen`'s receiver: a loopback HTTP server that checks each delivery's
 * SVC-SIGNATURE with the tenant's secret, hands it to `report`, forwards it (body and signature
 * headers as they came) when asked, and answers with the forward's status.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BODY_LIMIT_BYTES } from '../../../api/limits.js';
import { verifySignature } from '../../../api/webhook-signature.js';

/** The headers of a delivery that go on with it to `--forward-to`. */
const FORWARDED = ['content-type', 'svc-signature', 'svc-webhook-id', 'user-agent'];
/**
 * Sent with each forward, holding this receiver's own mark: a request that comes back with it was
 * forwarded here by this receiver (through another server), and is answered 508, not forwarded
 * again, so that a forward that leads back here is one extra request, not a loop.
 */
const HOP_HEADER = 'svc-listen-hop';
/** How long a forward may take before the delivery is answered 504. */
const FORWARD_TIMEOUT_MS = 30_000;

export interface Received {
  eventId: string | undefined;
  verified: boolean;
  /** Why it is not verified: no SVC-SIGNATURE, or one that does not match the body and the secret. */
  refusal?: string;
  text: string;
  body: unknown;
  /** What the receiver answered: the forward's status, or its own. */
  answered: number;
  forward?: { status?: number; error?: string };
}

export interface ReceiverOptions {
  secret: string;
  port: number;
  forwardTo?: string | undefined;
  report: (received: Received) => void;
}

export async function startReceiver(
  options: ReceiverOptions,
): Promise<{ url: string; port: number; close(): Promise<void> }> {
  const mark = randomUUID();
  const server = createServer((request, response) => {
    void receive(request, options, mark).then(
      (status) => {
        if (!response.destroyed) response.writeHead(status).end();
      },
      () => {
        if (!response.destroyed) response.writeHead(500).end();
      },
    );
  });
  await listen(server, options.port);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}

async function receive(request: IncomingMessage, options: ReceiverOptions, mark: string): Promise<number> {
  if (request.method !== 'POST') {
    request.resume();
    return 405;
  }
  if (request.headers[HOP_HEADER] === mark) {
    request.resume();
    return 508;
  }
  const text = await readBody(request);
  if (text === undefined) return 413;
  const signature = request.headers['svc-signature'];
  const verified = typeof signature === 'string' && verifySignature(options.secret, text, signature);
  const eventId = request.headers['svc-webhook-id'];
  const received: Received = {
    eventId: typeof eventId === 'string' ? eventId : undefined,
    verified,
    ...(!verified && {
      refusal: typeof signature === 'string' ? 'signature does not match' : 'no SVC-SIGNATURE header',
    }),
    text,
    body: parsed(text),
    answered: verified ? 200 : 401,
  };
  if (options.forwardTo !== undefined) {
    // Forwarded whatever the check said: the application's own check is what it is there to try.
    received.forward = await forward(options.forwardTo, request, text, mark);
    received.answered = received.forward.status ?? 502;
  }
  options.report(received);
  return received.answered;
}

async function forward(
  url: string,
  request: IncomingMessage,
  text: string,
  mark: string,
): Promise<{ status?: number; error?: string }> {
  const headers: Record<string, string> = { [HOP_HEADER]: mark };
  for (const name of FORWARDED) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers,
      body: text,
      redirect: 'manual',
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    await response.arrayBuffer().catch(() => undefined);
    return { status: response.status };
  } catch (error) {
    const cause = (error as Error & { cause?: NodeJS.ErrnoException }).cause;
    return { error: cause?.code ?? (error as Error).message };
  }
}

/** The body, or undefined past the API's body limit (the emulator never sends more). */
function readBody(request: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT_BYTES) {
        request.destroy();
        resolve(undefined);
      } else chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', () => resolve(undefined));
  });
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Whether `url` names this receiver itself (a loopback host, or 0.0.0.0, on its port): forwarding there loops. */
export function isReceiverItself(url: string, port: number): boolean {
  const target = new URL(url);
  const targetPort = Number(target.port || (target.protocol === 'https:' ? 443 : 80));
  const host = target.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const loopback = host === 'localhost' || host === '0.0.0.0' || host === '::1' || host.startsWith('127.');
  return loopback && targetPort === port;
}
