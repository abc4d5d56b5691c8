import { beforeAll, describe, expect, it } from 'vitest';
import { inFlags } from '../../src/cli/serve/log.js';
import { createEmulator, EmulatorError } from '../../src/emulator/index.js';
import { sharedEmulator, type TestEmulator } from '../helpers/emulator.js';
import { eventually } from '../helpers/wait.js';
import { CARD, httpsSink, leaksOf, reactWith, SECRET, SEND } from './helpers.js';

/**
 * A reactor's own https requests (issue 29: "outbound https requests of user code"): a reactor has no
 * proxy destination, so its call's plaintext (or a card number) in any part of a request to any host
 * not declared for it is a finding: told in warn mode (the request goes), refused in fail mode (it
 * does not, and the call answers the leak problem even when its code went on without it).
 */
const SENDS: Array<{ name: string; send: string; form: string | RegExp }> = [
  // The value holds nothing JSON escapes: its JSON form is itself, named plain.
  { name: 'in a JSON body', send: 'send({ writes: [JSON.stringify({ key: args.secret })] })', form: 'plain' },
  {
    name: 'in a body written in pieces, the value cut between two writes',
    send: "send({ writes: ['{\"k\":\"' + args.secret.slice(0, 9), args.secret.slice(9) + '\"}', ' '.repeat(70000)] })",
    form: 'plain',
  },
  { name: 'in a header', send: "send({ headers: { 'x-api-key': args.secret } })", form: 'plain' },
  { name: 'in the query', send: "send({ path: '/charge?k=' + encodeURIComponent(args.secret) })", form: 'percent' },
  {
    name: 'in the path, base64url',
    send: "send({ path: '/c/' + Buffer.from('>' + args.secret).toString('base64url') })",
    // This value's base64 holds no + or /: the same text as base64url, named base64.
    form: /^base64/,
  },
  {
    name: 'a card of a token, spaced, in a form body',
    send: "send({ writes: ['number=' + args.card.match(/.{4}/g).join(' ')] })",
    form: 'card-spaced',
  },
  { name: 'a card number from no token', send: "send({ writes: ['cc=5555-5555-5555-4444'] })", form: 'card' },
];

describe.each(['warn', 'fail'] as const)("a reactor's https requests, %s mode", (mode) => {
  const shared = sharedEmulator({ inMemory: true, leakGuard: mode });
  let emu: TestEmulator;
  let sink: Awaited<ReturnType<typeof httpsSink>>;
  beforeAll(async () => {
    emu = shared();
    sink = await httpsSink();
  });

  it.each(SENDS)('finds the plaintext $name', async ({ send, form }) => {
    const before = sink.received.length;
    const { answer, traceId } = await reactWith(
      emu,
      `${SEND}\nconst sent = await ${send};\nreturn { raw: { sent } };`,
      {
        port: String(sink.port),
        ca: sink.ca,
      },
    );
    await eventually(() =>
      expect(leaksOf(emu.events, traceId)).toContainEqual(
        expect.objectContaining({
          place: 'outbound',
          form: typeof form === 'string' ? form : expect.stringMatching(form),
          action: mode === 'fail' ? 'refused' : 'warned',
        }),
      ),
    );
    if (mode === 'warn') {
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body.raw.sent).toBe(200);
    } else {
      // The code caught the failed request and went on: the call is still answered with the leak problem.
      expect(answer.status, answer.text).toBe(500);
      expect(answer.body.type).toBe('urn:svc:problem:leak');
      expect(answer.text).not.toContain(SECRET);
      expect(answer.text).not.toContain(CARD);
      const sent = sink.received.slice(before);
      expect(JSON.stringify(sent)).not.toContain('sk_live');
    }
  });

  it('leaves alone a request without plaintext', async () => {
    const { answer, traceId } = await reactWith(
      emu,
      `${SEND}\nconst sent = await send({ path: '/charge?amount=1250', headers: { 'x-last4': args.card.slice(-4) }, writes: [JSON.stringify({ card: '****' + args.card.slice(-4) })] });\nreturn { raw: { sent } };`,
      { port: String(sink.port), ca: sink.ca },
    );
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.raw.sent).toBe(200);
    expect(leaksOf(emu.events, traceId)).toEqual([]);
  });
});

describe('a host declared for the plaintext (leakGuardAllowHosts)', () => {
  const shared = sharedEmulator({ inMemory: true, leakGuard: 'fail', leakGuardAllowHosts: ['127.0.0.1'] });
  let emu: TestEmulator;
  let sink: Awaited<ReturnType<typeof httpsSink>>;
  beforeAll(async () => {
    emu = shared();
    sink = await httpsSink();
  });

  it('gets the card and the secret, with no finding', async () => {
    const { answer, traceId } = await reactWith(
      emu,
      `${SEND}\nconst sent = await send({ headers: { authorization: 'Bearer ' + args.secret }, writes: [JSON.stringify({ card: args.card })] });\nreturn { raw: { sent } };`,
      { port: String(sink.port), ca: sink.ca },
    );
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.raw.sent).toBe(200);
    expect(leaksOf(emu.events, traceId)).toEqual([]);
    expect(sink.received.at(-1)?.body).toContain(CARD);
  });

  it('is refused when not a host name, named by its flag in svc serve', async () => {
    const emulator = createEmulator({ inMemory: true, port: 0, leakGuardAllowHosts: ['https://api.example.com/v1'] });
    const error = await emulator.ready.then(
      () => undefined,
      (refused: unknown) => refused,
    );
    expect(error).toBeInstanceOf(EmulatorError);
    expect((error as Error).message).toMatch(/leakGuardAllowHosts must be host names/);
    expect(inFlags(error as EmulatorError)).toMatch(/^--leak-guard-allow-host must be host names/);
  });
});
