import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySignature } from '../api/webhook-signature.js';

/** One webhook a tenant's receiver was sent, its signature checked with the tenant's secret. */
export interface ReceivedWebhook {
  /** `SVC-WEBHOOK-ID`: the same on every attempt of one delivery. */
  id: string | undefined;
  /** The body parsed (a reactor result event). */
  body: unknown;
  /** The body as sent. */
  text: string;
  headers: Record<string, string | string[] | undefined>;
  /**
   * Why the receiver answered 500 instead of what `reply` was to say: it threw, or gave no HTTP
   * status (an integer from 200 to 599). Absent when it answered as `reply` said.
   */
  replyError?: string;
}

/** Answers what the receiver's owner wants it to (default 200): an HTTP status, 200 to 599. */
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
        // receive() never throws: a reply that fails is a 500, and the answer always ends.
        if (!response.destroyed) response.writeHead(this.receive(request, text)).end();
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
    const delivery: ReceivedWebhook = {
      id: typeof id === 'string' ? id : undefined,
      body,
      text,
      headers: { ...request.headers },
    };
    inbox.received.push(delivery);
    return replied(inbox.reply, delivery);
  }
}

/**
 * The status `reply` gives for `delivery`, or 500 with why in `delivery.replyError`. A 1xx is no
 * final answer (the sender would wait on for one), and writeHead refuses what is no status at all.
 */
function replied(reply: WebhookReply, delivery: ReceivedWebhook): number {
  let status: unknown;
  try {
    status = reply(delivery);
  } catch (error) {
    delivery.replyError = `the reply function threw: ${error instanceof Error ? error.message : String(error)}`;
    return 500;
  }
  if (Number.isInteger(status) && (status as number) >= 200 && (status as number) <= 599) return status as number;
  delivery.replyError = `the reply function returned ${shown(status)}, not an HTTP status from 200 to 599`;
  return 500;
}

function shown(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (value instanceof Promise) return 'a Promise (a reply is synchronous)';
  return value === null ? 'null' : typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : typeof value;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', () => resolve(''));
  });
}
