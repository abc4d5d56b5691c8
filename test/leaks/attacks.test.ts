import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorEvent } from '../../src/emulator/index.js';
import { createToken, sharedEmulator, type TestEmulator, unique } from '../helpers/emulator.js';
import { eventually } from '../helpers/wait.js';
import { CARD, leaksOf, SECRET } from './helpers.js';

/**
 * Attacks on the leak guard through real reactors: each spills the call's plaintext by a route the
 * builder did not test. In fail mode the call must be answered with the leak problem and no event
 * or answer may hold the value. The misses the guard has are in secrets.test.ts (asserted as
 * misses) and README "Leak guard".
 */
const CAFE = 'Café-crème-secret'; // NFC; the code spills its NFD form
const NUMBER = 42424242;

interface Attack {
  name: string;
  code: string;
  place: string;
  form: string | RegExp;
}

const ATTACKS: Attack[] = [
  { name: 'a thrown string', code: 'throw args.secret;', place: 'error', form: /./ },
  {
    name: 'a thrown plain object',
    code: "throw { code: 'declined', detail: 'card ' + args.card };",
    place: 'error',
    form: /./,
  },
  {
    name: "a CustomHttpResponseError's body",
    code: 'throw new CustomHttpResponseError({ status: 402, body: { card: args.card } });',
    place: 'error',
    form: 'plain',
  },
  {
    name: "a CustomHttpResponseError's header",
    code: "throw new CustomHttpResponseError({ status: 402, headers: { 'x-key': args.secret }, body: {} });",
    place: 'error',
    form: 'plain',
  },
  {
    name: 'the value in NFD',
    code: "return { raw: args.cafe.normalize('NFD') };",
    place: 'raw',
    form: 'unicode',
  },
  { name: 'a number token as a number', code: 'return { raw: { n: args.n } };', place: 'raw', form: 'plain' },
  {
    name: 'a number token in a string',
    code: "return { raw: 'n=' + String(args.n) };",
    place: 'raw',
    form: 'plain',
  },
  {
    name: 'JSON of JSON',
    code: 'return { raw: JSON.stringify(JSON.stringify({ k: args.quoted })) };',
    place: 'raw',
    form: 'json',
  },
  {
    name: 'base64 of the JSON of the value',
    code: "return { raw: Buffer.from(JSON.stringify({ k: args.quoted })).toString('base64') };",
    place: 'raw',
    form: 'base64',
  },
  {
    name: 'upper-case hex',
    code: "return { raw: Buffer.from(args.secret).toString('hex').toUpperCase() };",
    place: 'raw',
    form: 'hex',
  },
  {
    name: 'percent-encoded separators in capitals and small letters',
    code: "return { raw: encodeURIComponent(args.secret).replace('%2F', '%2f') };",
    place: 'raw',
    form: 'percent',
  },
  {
    name: 'a card with dots',
    code: "return { raw: args.card.match(/.{4}/g).join('.') };",
    place: 'raw',
    form: 'card-grouped',
  },
  {
    name: 'a card with %20 between groups',
    code: "return { raw: 'n=' + args.card.match(/.{4}/g).join('%20') };",
    place: 'raw',
    form: 'card-spaced',
  },
  {
    name: 'a card with + between groups (a form)',
    code: "return { raw: 'n=' + args.card.match(/.{4}/g).join('+') };",
    place: 'raw',
    form: 'card-spaced',
  },
  {
    name: 'a card glued inside longer text',
    code: "return { raw: 'ref' + args.card + 'x9' };",
    place: 'raw',
    form: 'plain',
  },
  { name: 'a scanned card with dots', code: "return { raw: 'cc 5555.5555.5555.4444' };", place: 'raw', form: 'card' },
  {
    name: 'a console line of a card with no-break spaces',
    code: "console.log(args.card.match(/.{4}/g).join('\\u00a0')); return { raw: 1 };",
    place: 'console',
    form: 'card-grouped',
  },
];

describe('attacks on the leak guard (fail mode)', () => {
  const shared = sharedEmulator({ inMemory: true, leakGuard: 'fail' });
  let emu: TestEmulator;
  let args: Record<string, string>;
  beforeAll(async () => {
    emu = shared();
    const made = async (data: unknown) => `{{ ${(await createToken(emu, { type: 'token', data })).id} }}`;
    args = {
      secret: await made(SECRET),
      card: await made(CARD),
      cafe: await made(CAFE.normalize('NFC')),
      n: await made(NUMBER),
      quoted: await made('pa"ss\\w0rd'),
    };
  });

  async function react(code: string) {
    const reactor = await emu.call('POST', '/reactors', {
      body: {
        name: unique('attack'),
        code: `module.exports = async function (req) { const args = req.args; ${code} };`,
        configuration: {},
      },
    });
    expect(reactor.status, reactor.text).toBe(201);
    const answer = await emu.call('POST', `/reactors/${reactor.body.id}/react`, {
      key: emu.privateKey,
      body: { args },
    });
    return { answer, traceId: String(answer.headers['svc-trace-id'] ?? '') };
  }

  it.each(ATTACKS)('catches $name', async ({ code, place, form }) => {
    const { answer, traceId } = await react(code);
    await eventually(() =>
      expect(leaksOf(emu.events, traceId)).toContainEqual(
        expect.objectContaining({ place, form: typeof form === 'string' ? form : expect.stringMatching(form) }),
      ),
    );
    if (place !== 'console') {
      expect(answer.status, answer.text).toBe(500);
      expect(answer.body.type).toBe('urn:svc:problem:leak');
    }
    const told = JSON.stringify([answer.text, eventsOf(emu.events, traceId)]);
    for (const value of [SECRET, CARD, CAFE, CAFE.normalize('NFD'), String(NUMBER), 'pa\\"ss']) {
      expect(told).not.toContain(value);
    }
  });

  it("an error's cause is neither answered nor logged", async () => {
    const { answer, traceId } = await react(
      "throw new Error('charge failed', { cause: new Error('key ' + args.secret) });",
    );
    expect(answer.status).toBe(500);
    await eventually(() =>
      expect(eventsOf(emu.events, traceId).some((event) => event.type === 'invocation')).toBe(true),
    );
    expect(JSON.stringify([answer.text, eventsOf(emu.events, traceId)])).not.toContain('sk_live');
  });

  it('lets a tokenize block store the value (the caller gets its id only)', async () => {
    const { answer, traceId } = await react('return { raw: { ok: true }, tokenize: { again: args.secret } };');
    expect(answer.status, answer.text).toBe(200);
    expect(answer.text).not.toContain(SECRET);
    expect(leaksOf(emu.events, traceId)).toEqual([]);
  });

  it("a refused tokenize block's errors do not echo the value", async () => {
    const { answer } = await react(
      "return { raw: { ok: true }, tokenize: { c: { type: 'card', data: { number: args.secret, expiration_month: 12, expiration_year: 2099 } } } };",
    );
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.text).not.toContain(SECRET);
  });
});

const eventsOf = (events: EmulatorEvent[], traceId: string) =>
  events.filter((event) => JSON.stringify(event).includes(traceId));

describe('attacks on the leak guard through a proxy (fail mode)', () => {
  const shared = sharedEmulator({ inMemory: true, leakGuard: 'fail' });
  let emu: TestEmulator;
  let destinationUrl: string;
  let token: string;
  let destination: Server;
  afterAll(() => {
    destination?.closeAllConnections();
    destination?.close();
  });
  beforeAll(async () => {
    emu = shared();
    // Echoes the body, and its `secret` field in a header of the answer too.
    destination = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        const echo = String(JSON.parse(body || '{}').secret ?? '');
        response.writeHead(200, { 'content-type': 'application/json', 'x-echo': echo });
        response.end(JSON.stringify({ ok: true }));
      });
    });
    await new Promise<void>((resolve) => destination.listen(0, '127.0.0.1', resolve));
    destinationUrl = `http://127.0.0.1:${(destination.address() as AddressInfo).port}`;
    token = (await createToken(emu, { type: 'token', data: SECRET })).id;
  });

  async function send(extra: Record<string, unknown>) {
    const created = await emu.call('POST', '/proxies', {
      body: { name: unique('attack'), destination_url: destinationUrl, ...extra },
    });
    expect(created.status, created.text).toBe(201);
    const answer = await emu.call('POST', '/proxy', {
      key: emu.privateKey,
      body: { secret: `{{ ${token} }}` },
      headers: { 'SVC-PROXY-KEY': created.body.key },
    });
    return { answer, traceId: String(answer.headers['svc-trace-id'] ?? '') };
  }

  const transform = (headers: string) =>
    `module.exports = async (req) => ({ body: { ok: true }, headers: { 'content-type': 'application/json', ${headers} } });`;

  it.each([
    [
      'a header of the answer the response transform sets',
      { response_transform: { code: transform("'x-key': req.args.headers['x-echo']") } },
    ],
    ["a header of the destination's answer passed back", {}],
  ])('catches %s', async (_name, extra) => {
    const { answer, traceId } = await send(extra);
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.text).proxy_error.type).toBe('urn:svc:problem:leak');
    expect(JSON.stringify(answer.headers)).not.toContain('sk_live');
    expect(leaksOf(emu.events, traceId)).toContainEqual(expect.objectContaining({ place: 'answer', form: 'plain' }));
  });

  it('an SVC- header a transform sets never reaches the caller', async () => {
    const { answer } = await send({
      response_transform: {
        code: transform(
          "'SVC-PROXY-DESTINATION-STATUS': req.args.headers['x-echo'], 'svc-note': req.args.headers['x-echo']",
        ),
      },
    });
    expect(JSON.stringify([answer.headers, answer.text])).not.toContain('sk_live');
  });
});
