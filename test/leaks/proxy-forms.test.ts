import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken, sharedEmulator, type TestEmulator, unique } from '../helpers/emulator.js';
import { eventually } from '../helpers/wait.js';
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

  async function proxy(extra: Record<string, unknown> = {}): Promise<string> {
    const created = await emu.call('POST', '/proxies', {
      body: { name: unique('proxy'), destination_url: destinationUrl, ...extra },
    });
    expect(created.status, created.text).toBe(201);
    return created.body.key;
  }

  const through = (key: string, payload: unknown, headers: Record<string, string> = {}) =>
    emu.call('POST', '/proxy', { key: emu.privateKey, body: payload, headers: { 'SVC-PROXY-KEY': key, ...headers } });

  const send = async (payload: unknown, headers: Record<string, string> = {}) =>
    through(await proxy(), payload, headers);

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

  it('a transform that logs a value kept from an earlier call has it redacted', async () => {
    const token = (await createToken(emu, { type: 'token', data: SECRET })).id;
    const transform = `let kept;
      module.exports = async (req) => {
        const { body } = req.args;
        if (body.secret) kept = body.secret;
        else console.log('transform kept ' + kept);
        return { body: { ok: true }, headers: { 'content-type': 'application/json' } };
      };`;
    const key = await proxy({ request_transform: { code: transform } });
    expect((await through(key, { warm: true })).status).toBe(200);
    expect((await through(key, { secret: `{{ ${token} }}` })).status).toBe(200);
    expect((await through(key, { later: true })).status).toBe(200);
    const line = await eventually(() => {
      const found = emu.events.find(
        (event) =>
          event.type === 'console' && event.text.startsWith('transform kept ') && !event.text.endsWith('undefined'),
      );
      expect(found).toBeDefined();
      return found as { text: string };
    });
    expect(line.text).toBe(`transform kept {{ ${token} }}`);
    expect(JSON.stringify(emu.events)).not.toContain(SECRET);
  });
});
