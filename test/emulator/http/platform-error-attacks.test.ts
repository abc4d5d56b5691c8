import { describe, expect, it } from 'vitest';
import { type HttpResult, sharedEmulator, type TestEmulator, unique } from '../../helpers/emulator.js';

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
