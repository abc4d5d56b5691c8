import type { Socket } from 'node:net';
import { expect, it, onTestFinished } from 'vitest';
import { OutboundGateway } from '../../../src/emulator/outbound/index.js';
import { httpsDestination } from './destination.js';

it("a deleted tenant's kept-alive connections of user code are ended, another tenant's kept", async () => {
  const sockets: Socket[] = [];
  const target = await httpsDestination((request, response) => {
    if (!sockets.includes(request.socket)) sockets.push(request.socket);
    response.end('ok');
  });
  const gateway = new OutboundGateway();
  onTestFinished(() => gateway.close());
  const send = async (tenantId: string) => {
    const answer = await gateway.send(
      { url: new URL(`${target.url}/x`), method: 'GET', headers: {}, body: undefined, tls: { ca: target.ca } },
      { tenantId, kind: 'reactor', id: `code-${tenantId}`, name: 'pay', traceId: 'trace' },
    );
    for await (const _ of answer.body) {
      // read to its end: the socket goes back to its tenant's keep-alive pool
    }
  };
  await send('t1');
  await send('t2');
  expect(sockets).toHaveLength(2);
  const [first, second] = sockets as [Socket, Socket];
  const closed = new Promise<void>((resolve) => first.once('close', () => resolve()));
  gateway.forgetTenant('t1');
  await closed;
  expect(first.destroyed).toBe(true);
  expect(second.destroyed).toBe(false);
});
