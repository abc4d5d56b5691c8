import { describe, expect, it } from 'vitest';
import {
  createApplication,
  type HttpResult,
  sharedEmulator,
  type TestEmulator,
  unique,
} from '../../helpers/emulator.js';

/** User code throwing the platform's errors with hostile contents: each answer is a clear one, never a broken sandbox. */
const source = (...lines: string[]) => `${lines.join('\n')}\n`;

async function reactor(emu: TestEmulator, code: string): Promise<string> {
  const created = await emu.call('POST', '/reactors', { body: { name: unique('r'), code, configuration: {} } });
  expect(created.status, created.text).toBe(201);
  return created.body.id;
}

function react(emu: TestEmulator, id: string, args: unknown = {}): Promise<HttpResult> {
  return emu.call('POST', `/reactors/${id}/react`, { key: emu.privateKey, body: { args } });
}

describe('hostile platform errors', () => {
  const emu = sharedEmulator();

  it.each([
    ['a sparse list', 'const list = []; list[2] = "late"; throw new BadRequestError(list);'],
    [
      'a sparse list set after',
      'const e = new BadRequestError("x"); const l = []; l[3] = "y"; e.errors = { field: l }; throw e;',
    ],
    [
      'a getter that throws',
      'const e = new BadRequestError("x"); e.errors = { get field() { throw new Error("no"); } }; throw e;',
    ],
    ['a toJSON', 'throw new BadRequestError({ field: { toJSON() { throw new Error("no"); } } });'],
    ['a cyclic object', 'const a = {}; a.self = a; throw new BadRequestError({ field: a });'],
    ['a proxy', 'throw new BadRequestError(new Proxy({}, { ownKeys() { throw new Error("no"); } }));'],
    ['a symbol', 'throw new BadRequestError({ field: Symbol("s") });'],
    ['a huge list', 'throw new BadRequestError(Array.from({ length: 200000 }, (_, i) => "e" + i));'],
    ['a long sparse list', 'const l = []; l[5000000] = "x"; throw new BadRequestError(l);'],
    ['a __proto__ key', 'throw new BadRequestError(JSON.parse(\'{"__proto__": ["p"], "constructor": ["c"]}\'));'],
  ])('%s in errors answers 400 with errors as string lists', async (_, line) => {
    const id = await reactor(
      emu(),
      source("const { BadRequestError } = require('@svc/errors');", 'module.exports = async () => {', line, '};'),
    );
    const answer = await react(emu(), id);
    expect(answer.status, answer.text.slice(0, 400)).toBe(400);
    expect(answer.body.detail).toBe('Bad Request');
    for (const list of Object.values(answer.body.errors ?? {})) {
      expect(Array.isArray(list)).toBe(true);
      for (const item of list as unknown[]) expect(typeof item).toBe('string');
    }
    expect(answer.text.length).toBeLessThan(64 * 1024);
    // The sandbox still serves the next call.
    const again = await react(emu(), await reactor(emu(), 'module.exports = async () => ({ ok: true });\n'));
    expect(again.status, again.text).toBe(200);
  });
});

describe('req.svc given hostile bodies', () => {
  const emu = sharedEmulator();

  it.each([
    [
      'nested past the limit',
      'let deep = {}; for (let i = 0; i < 200000; i++) deep = { inner: deep }; return svc.tokens.create({ type: "token", data: "x", searchIndexes: deep });',
      400,
    ],
    [
      'a getter that throws',
      'return svc.tokens.create({ type: "token", data: "x", get expiresAt() { throw new Error("getter"); } });',
      'getter',
    ],
    ['a cycle', 'const a = { type: "token", data: "x" }; a.extra = a; return svc.tokens.list(a);', 400],
  ])('%s: the call rejects (a promise), never throws at once', async (_, line, expected) => {
    const bound = await createApplication(emu(), {
      name: unique('svc'),
      type: 'private',
      permissions: ['token:create', 'token:read'],
    });
    const created = await emu().call('POST', '/reactors', {
      body: {
        name: unique('r'),
        configuration: {},
        application: { id: bound.id },
        code: source(
          'module.exports = async (req) => {',
          '  const svc = req.svc;',
          '  let promise;',
          '  try { promise = (() => { ' +
            line +
            ' })(); } catch (e) { return { raw: { threw: String(e && e.message) } }; }',
          '  try { await promise; return { raw: { ok: true } }; } catch (e) { return { raw: { rejected: e.status ?? String(e.message) } }; }',
          '};',
        ),
      },
    });
    expect(created.status, created.text).toBe(201);
    const answer = await react(emu(), created.body.id);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.raw.threw, answer.text).toBeUndefined();
    if (typeof expected === 'number') expect(answer.body.raw.rejected).toBe(expected);
    else expect(String(answer.body.raw.rejected)).toContain(expected);
  });
});

describe('CustomHttpResponseError with hostile headers and statuses', () => {
  const emu = sharedEmulator();

  it.each([
    ['a framing header', '{ "content-length": "1", "transfer-encoding": "chunked", connection: "close" }', 418],
    ['a CRLF in a value', '{ "x-a": "1\\r\\nx-injected: yes" }', 500],
    ['a name Node refuses', '{ "bad name": "1" }', 500],
    ['a value past Latin-1', '{ "x-a": "\\u2028" }', 500],
    ['a trace id of its own', '{ "svc-trace-id": "mine" }', 418],
  ])('%s: a clear answer, the connection still serves', async (_, headers, status) => {
    const id = await reactor(
      emu(),
      source(
        "const { CustomHttpResponseError } = require('@svc/errors');",
        'module.exports = async () => {',
        `  throw new CustomHttpResponseError({ status: 418, headers: ${headers}, body: { short: 'and stout' } });`,
        '};',
      ),
    );
    const answer = await react(emu(), id);
    expect(answer.status, answer.text.slice(0, 300)).toBe(status);
    expect(answer.headers['x-injected']).toBeUndefined();
    if (status === 418) {
      expect(answer.body).toEqual({ short: 'and stout' });
      expect(answer.headers['svc-trace-id']).not.toBe('mine');
    } else expect(answer.body.detail, answer.text).toMatch(/header/i);
    const health = await emu().call('GET', '/health', { key: null });
    expect(health.status).toBe(200);
  });
});
