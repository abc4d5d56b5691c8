import { describe, expect, it } from 'vitest';
import type { EmulatorEvent } from '../../src/emulator/index.js';
import { LeakGuard } from '../../src/emulator/leaks/guard.js';
import { CallSecrets } from '../../src/emulator/leaks/secrets.js';
import { Runtime } from '../../src/emulator/runtime/index.js';
import { createToken, sharedEmulator, type TestEmulator, unique } from '../helpers/emulator.js';
import { eventually, sleep } from '../helpers/wait.js';
import { SECRET } from './helpers.js';

/**
 * What code keeps: a value a reactor was revealed stays redacted while its code version lives,
 * whichever later call or top-level timer prints it, and a trace id the caller chooses twice makes
 * two calls neither share nor replace a watch.
 */
const emulator = sharedEmulator({ inMemory: true, leakGuard: 'fail' });

const KEEPER = `
let kept;
module.exports = async function (req) {
  const { args } = req;
  if (args.secret) { kept = args.secret; return { raw: { kept: true } }; }
  if (args.log) { console.log('later ' + kept); return { raw: { logged: true } }; }
  return { raw: { value: kept } };
};`;
/** The keeper with a top-level timer printing what it keeps (a process holding a timer may serve the next call from another). */
const TICKER = `setInterval(() => { if (kept) console.log('tick ' + kept); }, 200);\n${KEEPER}`.replace(
  'let kept;',
  '',
);
const tickerOf = (word: string) => `let kept;\n${TICKER.replace("'tick '", `'${word} '`)}`;

/** A reactor of `code`, called once (its process started: the calls after it find the same module state). */
async function reactor(emu: TestEmulator, code: string): Promise<string> {
  const made = await emu.call('POST', '/reactors', { body: { name: unique('keeper'), code, configuration: {} } });
  expect(made.status, made.text).toBe(201);
  expect((await react(emu, made.body.id, { warm: true })).status).toBe(200);
  return made.body.id;
}

const react = (emu: TestEmulator, id: string, args: unknown, headers: Record<string, string> = {}) =>
  emu.call('POST', `/reactors/${id}/react`, { key: emu.privateKey, body: { args }, headers });

const texts = (events: EmulatorEvent[]) => events.map((event) => JSON.stringify(event));

describe('values kept by code', () => {
  it('a later call that logs a value kept in module state has it redacted', async () => {
    const emu = emulator();
    const token = (await createToken(emu, { type: 'token', data: SECRET })).id;
    const id = await reactor(emu, KEEPER);
    expect((await react(emu, id, { secret: `{{ ${token} }}` })).status).toBe(200);
    const later = await react(emu, id, { log: true });
    expect(later.status, later.text).toBe(200);
    const line = await eventually(() => {
      const found = emu.events.find((event) => event.type === 'console' && event.text.startsWith('later '));
      expect(found).toBeDefined();
      return found as EmulatorEvent & { text: string; requestId?: string };
    });
    expect(line.text).toBe(`later {{ ${token} }}`);
    // The line still names the call's request id (what svc/testing's logs group by), not the guard's own.
    expect(line.requestId).toBe(later.headers['svc-trace-id']);
    expect(texts(emu.events).join('\n')).not.toContain(SECRET);
  });

  it("a top-level timer's lines are redacted (no call runs)", async () => {
    const emu = emulator();
    const token = (await createToken(emu, { type: 'token', data: SECRET })).id;
    const id = await reactor(emu, tickerOf('tock'));
    expect((await react(emu, id, { secret: `{{ ${token} }}` })).status).toBe(200);
    const tick = await eventually(() => {
      const found = emu.events.find((event) => event.type === 'console' && event.text.startsWith('tock '));
      expect(found).toBeDefined();
      return found as EmulatorEvent & { text: string };
    });
    expect(tick.text).toBe(`tock {{ ${token} }}`);
    expect(texts(emu.events).join('\n')).not.toContain(SECRET);
  });

  it('a call that revealed nothing returning a kept value is refused in fail mode', async () => {
    const emu = emulator();
    const token = (await createToken(emu, { type: 'token', data: SECRET })).id;
    const id = await reactor(emu, KEEPER);
    expect((await react(emu, id, { secret: `{{ ${token} }}` })).status).toBe(200);
    const answer = await react(emu, id, {});
    expect(answer.status, answer.text).toBe(500);
    expect(answer.text).not.toContain(SECRET);
    expect(answer.body.leaks).toContainEqual({ place: 'raw', form: 'plain', token_id: token });
  });

  it('a new version of the code does not hold what the old one was revealed: its answers are not refused for it', async () => {
    const emu = emulator();
    const token = (await createToken(emu, { type: 'token', data: SECRET })).id;
    const id = await reactor(emu, KEEPER);
    expect((await react(emu, id, { secret: `{{ ${token} }}` })).status).toBe(200);
    // The new version echoes what it is given: the kept value written by the caller itself is no leak of its.
    const echo = 'module.exports = async (req) => ({ raw: { echo: req.args.echo } });';
    const updated = await emu.call('PATCH', `/reactors/${id}`, {
      raw: JSON.stringify({ code: echo }),
      contentType: 'application/merge-patch+json',
    });
    expect(updated.status, updated.text).toBe(204);
    const answer = await eventually(async () => {
      const again = await react(emu, id, { echo: SECRET });
      expect(again.status, again.text).toBe(200);
      return again;
    });
    expect(answer.body.raw).toEqual({ echo: SECRET });
  });

  it('two calls under one caller-chosen trace id keep their own watch', async () => {
    const emu = emulator();
    const other = 'another-secret-value-7731';
    const first = (await createToken(emu, { type: 'token', data: SECRET })).id;
    const second = (await createToken(emu, { type: 'token', data: other })).id;
    const id = await reactor(
      emu,
      `module.exports = async function (req) {
        await new Promise((resolve) => setTimeout(resolve, req.args.wait));
        console.log('value ' + req.args.v);
        return { raw: {} };
      };`,
    );
    const traceId = unique('shared-trace');
    const answers = await Promise.all([
      react(emu, id, { v: `{{ ${first} }}`, wait: 300 }, { 'svc-trace-id': traceId }),
      (async () => {
        await sleep(50);
        return react(emu, id, { v: `{{ ${second} }}`, wait: 0 }, { 'svc-trace-id': traceId });
      })(),
    ]);
    for (const answer of answers) expect(answer.status, answer.text).toBe(200);
    const lines = await eventually(() => {
      const found = emu.events.filter(
        (event) => event.type === 'console' && event.text.startsWith('value ') && event.requestId === traceId,
      );
      expect(found).toHaveLength(2);
      return found.map((event) => (event as { text: string }).text).sort();
    });
    expect(lines).toEqual([`value {{ ${first} }}`, `value {{ ${second} }}`].sort());
    const all = texts(emu.events).join('\n');
    expect(all).not.toContain(SECRET);
    expect(all).not.toContain(other);
  });
});

describe("a code version's bound", () => {
  it('keeps the newest values and forgets the oldest first', () => {
    const set = new CallSecrets({ values: 3, bytes: 1 << 20 });
    for (let i = 0; i < 5; i++) set.add(`value-number-${i}`, `tok_${i}`);
    expect(set.size).toBe(3);
    expect(set.find('value-number-0 value-number-1')).toEqual([]);
    expect(set.find('value-number-4').map((hit) => hit.tokenId)).toEqual(['tok_4']);
  });

  it('keeps within its bytes', () => {
    const set = new CallSecrets({ values: 1000, bytes: 4096 });
    for (let i = 0; i < 100; i++) set.add(`a-longer-value-${i}-${'x'.repeat(40)}`, `tok_${i}`);
    expect(set.size).toBeLessThan(100);
    expect(set.size).toBeGreaterThan(0);
    expect(set.find(`a-longer-value-99-${'x'.repeat(40)}`).map((hit) => hit.tokenId)).toContain('tok_99');
  });

  it('a call sharing with its version gives it what it is revealed, and is searched with it', () => {
    const version = new CallSecrets({ values: 10, bytes: 1 << 20 });
    const earlier = new CallSecrets();
    earlier.add('kept-from-before', 'tok_a');
    earlier.share(version);
    const call = new CallSecrets();
    call.share(version);
    call.add('revealed-now', 'tok_b');
    expect(call.find('x kept-from-before y').map((hit) => hit.tokenId)).toEqual(['tok_a']);
    expect(version.find('revealed-now').map((hit) => hit.tokenId)).toEqual(['tok_b']);
  });
});

describe('a version forgotten when its process can no longer hold it', () => {
  it('the runtime tells its host once a replaced version is retired, or a deleted one unloaded', async () => {
    const guard = new LeakGuard('fail', [], () => {});
    const retired: string[] = [];
    const rt = new Runtime(
      {},
      {
        retired: (id, version) => {
          retired.push(`${id}@${version}`);
          guard.forget(id, version);
        },
      },
    );
    try {
      const code = (n: number) => `module.exports = async () => ({ n: ${n} });`;
      await rt.load({ id: 'keeper', version: 1, code: code(1), filename: 'keeper.js' });
      guard.owners.of('keeper', 1).add('kept-by-version-one', 'tok_1');
      await rt.load({ id: 'keeper', version: 2, code: code(2), filename: 'keeper.js' });
      await eventually(() => expect(retired).toEqual(['keeper@1']));
      expect(guard.owners.ofCode('keeper')).toEqual([]);
      guard.owners.of('keeper', 2).add('kept-by-version-two', 'tok_2');
      await rt.unload('keeper', 'reactor keeper');
      expect(retired).toEqual(['keeper@1', 'keeper@2']);
      expect(guard.owners.versions).toBe(0);
    } finally {
      await rt.dispose();
    }
  });
});
