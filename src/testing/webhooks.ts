import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySignature } from '../emulator/index.js';

/** One webhook a tenant's receiver was sent, its signature checked with the tenant's secret. */
export interface ReceivedWebhook {
  /** `SVC-WEBHOOK-ID`: the same on every attempt of one delivery. */
  id: string | undefined;
  /** The body parsed (a reactor result event). */
  body: unknown;
  /** The body as sent. */
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

/** Answers what the receiver's owner wants it to (default 200). */
export type WebhookReply = (delivery: ReceivedWebhook) => number;

interface Inbox {
  secret: string;
  received: ReceivedWebhook[];
  /** Deliveries whose signature did not verify: answered 401, not listed as received. */
  refused: number;
  reply: WebhookReply;
}

/**
 * The loopback receiver of a test run's webhooks: one server, a path per tenant inbox. A delivery
 * whose `SVC-SIGNATURE` does not verify with the inbox's secret is answered 401 and not listed.
 */
export class WebhookReceiver {
  private server: Promise<{ server: Server; url: string }> | undefined;
  private readonly inboxes = new Map<string, Inbox>();
  private stopped = false;

  /** A callback URL for a tenant whose deliveries are signed with `secret`; `inbox()` reads it. */
  async open(secret: string, reply: WebhookReply = () => 200): Promise<{ url: string; inbox: Inbox }> {
    if (this.stopped) throw new Error('svc/testing: this svc is stopped; its webhook receiver is closed.');
    const { url } = await (this.server ??= this.listen());
    const path = `/${randomBytes(12).toString('hex')}`;
    const inbox: Inbox = { secret, received: [], refused: 0, reply };
    this.inboxes.set(path, inbox);
    return { url: `${url}${path}`, inbox };
  }

  close(url: string): void {
    this.inboxes.delete(new URL(url).pathname);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const started = this.server;
    this.server = undefined;
    this.inboxes.clear();
    if (!started) return;
    const { server } = await started;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async listen(): Promise<{ server: Server; url: string }> {
    const server = createServer((request, response) => {
      void readBody(request).then((text) => {
        const status = this.receive(request, text);
        response.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    server.unref();
    const { port } = server.address() as AddressInfo;
    return { server, url: `http://127.0.0.1:${port}` };
  }

  private receive(request: IncomingMessage, text: string): number {
    const inbox = this.inboxes.get(request.url ?? '');
    if (!inbox || request.method !== 'POST') return 404;
    const signature = request.headers['svc-signature'];
    if (typeof signature !== 'string' || !verifySignature(inbox.secret, text, signature)) {
      inbox.refused++;
      return 401;
    }
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Listed as its text: the test sees what came.
    }
    const id = request.headers['svc-webhook-id'];
    const delivery = { id: typeof id === 'string' ? id : undefined, body, text, headers: { ...request.headers } };
    inbox.received.push(delivery);
    return inbox.reply(delivery);
  }
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', () => resolve(''));
  });
}
