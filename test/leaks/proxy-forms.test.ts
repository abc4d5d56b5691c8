import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken, sharedEmulator, type TestEmulator, unique } from '../helpers/emulator.js';
import { SECRET } from './helpers.js';

/**
 * A proxy's answers in fail mode, through a real loopback destination: one in UTF-16 is read as
 * the text it is, and a token whose value is a common word does not fail every JSON answer
 * (its Content-Type holds `application`).
 */
describe('the leak guard on what a proxy answers', () => {
  const shared = sharedEmulator({ inMemory: true, leakGuard: 'fail' });
  let emu: TestEmulator;
  let destination: Server;
  let destinationUrl: string;
  beforeAll(async () => {
    emu = shared();
    // Echoes the body in UTF-16 when asked (plaintext on purpose: the proxy sent it there), else answers `{"ok":true}`.
    destination = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        if (request.headers['x-answer'] === 'utf-16') {
          response.setHeader('content-type', 'application/json; charset=utf-16le');
          response.end(Buffer.from(body, 'utf16le'));
          return;
        }
        response.setHeader('content-type', 'application/json');
        response.end('{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => destination.listen(0, '127.0.0.1', resolve));
    destinationUrl = `http://127.0.0.1:${(destination.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    destination.closeAllConnections();
    destination.close();
  });

  async function send(payload: unknown, headers: Record<string, string> = {}) {
    const created = await emu.call('POST', '/proxies', {
      body: { name: unique('proxy'), destination_url: destinationUrl },
    });
    expect(created.status, created.text).toBe(201);
    return emu.call('POST', '/proxy', {
      key: emu.privateKey,
      body: payload,
      headers: { 'SVC-PROXY-KEY': created.body.key, ...headers },
    });
  }

  it('refuses a UTF-16 answer that hands the plaintext back', async () => {
    const token = (await createToken(emu, { type: 'token', data: SECRET })).id;
    const answer = await send({ secret: `{{ ${token} }}` }, { 'x-answer': 'utf-16' });
    expect(answer.status, answer.text).toBe(500);
    expect(JSON.parse(answer.text).proxy_error.type).toBe('urn:svc:problem:leak');
    expect(emu.events).toContainEqual(
      expect.objectContaining({ type: 'leak', tokenId: token, place: 'answer', action: 'refused' }),
    );
  });

  it.each(['application', 'Content-Type', 'keep-alive', 'password'])(
    'lets a JSON answer through when a token\'s value is "%s"',
    async (word) => {
      const token = (await createToken(emu, { type: 'token', data: word })).id;
      const answer = await send({ field: `{{ ${token} }}` });
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body).toEqual({ ok: true });
    },
  );
});
