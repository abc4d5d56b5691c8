import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken, sharedEmulator, type TestEmulator, unique } from '../helpers/emulator.js';
import { eventually } from '../helpers/wait.js';
import { leaksOf, reactWith, SECRET } from './helpers.js';

/** Big enough to stream (no Content-Length, several chunks), the value cut between two of them. */
const PADDING = 'x'.repeat(200_000);

describe.each(['warn', 'fail'] as const)('the leak guard on what streams or is kept, %s mode', (mode) => {
  const shared = sharedEmulator({ inMemory: true, leakGuard: mode });
  let emu: TestEmulator;
  let destination: Server;
  let destinationUrl: string;
  let hooks: Server;
  let hookUrl: string;
  const delivered: string[] = [];
  beforeAll(async () => {
    emu = shared();
    // Echoes the detokenized body back in pieces (chunked): the padding, then the body cut in two.
    destination = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'application/json' });
        const at = body.indexOf('sk_live') + 5;
        response.write(`{"pad":"${PADDING}","echo":`);
        response.write(body.slice(0, at));
        setTimeout(() => response.end(`${body.slice(at)}}`), 20);
      });
    });
    hooks = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        delivered.push(body);
        response.end('thanks');
      });
    });
    destinationUrl = await listen(destination);
    hookUrl = `${await listen(hooks)}/hook`;
  });
  afterAll(() => {
    destination.closeAllConnections();
    destination.close();
    hooks.closeAllConnections();
    hooks.close();
  });

  it('a streamed proxy answer echoing the detokenized body', async () => {
    const token = (await createToken(emu, { type: 'token', data: SECRET })).id;
    const created = await emu.call('POST', '/proxies', {
      body: { name: unique('echo'), destination_url: destinationUrl },
    });
    expect(created.status, created.text).toBe(201);
    const answer = await emu.call('POST', '/proxy', {
      key: emu.privateKey,
      body: { secret: `{{ ${token} }}` },
      headers: { 'SVC-PROXY-KEY': created.body.key },
    });
    const traceId = String(answer.headers['svc-trace-id'] ?? '');
    if (mode === 'warn') {
      // Scanned as it passed, never held back: the caller got it, a leak event says so.
      expect(answer.status).toBe(200);
      expect(answer.text).toContain(SECRET);
      expect(answer.text.length).toBeGreaterThan(PADDING.length);
    } else {
      // Read whole before anything is sent: refused.
      expect(answer.status).toBe(500);
      expect(answer.text).not.toContain(SECRET);
      expect(JSON.parse(answer.text).proxy_error.type).toBe('urn:svc:problem:leak');
    }
    await eventually(() =>
      expect(leaksOf(emu.events, traceId)).toContainEqual(
        expect.objectContaining({
          kind: 'proxy',
          place: 'answer',
          tokenId: token,
          action: mode === 'warn' ? 'warned' : 'refused',
        }),
      ),
    );
  });

  it("an asynchronous reactor's stored result and webhook payload", async () => {
    const { answer } = await reactWith(emu, 'return { raw: { echo: args.secret } };', {}, { callback_url: hookUrl });
    expect(answer.status, answer.text).toBe(202);
    const requestId = answer.body.id as string;
    const payload = await eventually(() => {
      const found = delivered.find((body) => body.includes(requestId));
      expect(found).toBeDefined();
      return JSON.parse(found as string);
    }, 10_000);
    const stored = await emu.call('GET', `/reactors/${payload.reactor_id}/results/${requestId}`, {
      key: emu.privateKey,
    });
    expect(stored.status, stored.text).toBe(200);
    await eventually(() =>
      expect(leaksOf(emu.events, requestId)).toContainEqual(
        expect.objectContaining({ kind: 'reactor', place: 'raw', action: mode === 'warn' ? 'warned' : 'refused' }),
      ),
    );
    if (mode === 'warn') {
      // Let through (plaintext may be meant), and told.
      expect(payload).toMatchObject({ status: 'completed', raw: { echo: SECRET } });
      expect(stored.body).toMatchObject({ status: 'completed', raw: { echo: SECRET } });
    } else {
      // Neither kept nor delivered: the run failed with the leak problem.
      expect(payload).toMatchObject({ status: 'failed', error: { type: 'urn:svc:problem:leak', status: 500 } });
      expect(stored.body).toMatchObject({ status: 'failed', error: { type: 'urn:svc:problem:leak' } });
      expect(JSON.stringify(payload)).not.toContain(SECRET);
      expect(stored.text).not.toContain(SECRET);
    }
    expect(JSON.stringify(emu.events)).not.toContain(SECRET);
  });
});

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
