import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

export interface Delivery {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * How the receiver answers its n-th request (1-based): a status (with optional headers), 'hang'
 * to hold the request open and never answer, or a function that writes the answer itself.
 */
export type Answer =
  | number
  | { status: number; headers?: Record<string, string> }
  | 'hang'
  | ((response: ServerResponse) => void);

export interface Receiver {
  url: string;
  received: Delivery[];
  /** Changes the answer from now on (for a receiver that comes back after an outage). */
  answer: (n: number) => Answer;
  /** Waits until `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<Delivery[]>;
}

/** A real webhook receiver on a loopback port, closed when the test ends. */
export async function startReceiver(
  answer: (n: number) => Answer = () => 200,
  path = '/hooks/reactor?source=svc',
): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    received: [],
    answer,
    waitFor: (count, timeoutMs = 8000) => {
      const deadline = Date.now() + timeoutMs;
      return new Promise((resolve, reject) => {
        const check = () => {
          if (receiver.received.length >= count) return resolve(receiver.received);
          if (Date.now() > deadline)
            return reject(new Error(`the receiver got ${receiver.received.length} of ${count} requests`));
          setTimeout(check, 20);
        };
        check();
      });
    },
  };
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      receiver.received.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      const action = receiver.answer(receiver.received.length);
      if (action === 'hang') return;
      if (typeof action === 'function') return action(response);
      const { status, headers = {} } = typeof action === 'number' ? { status: action } : action;
      response.writeHead(status, { 'content-type': 'text/plain', ...headers });
      response.end(status < 300 ? 'thanks' : 'not now');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return receiver;
}
