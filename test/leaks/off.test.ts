import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/wait.js';
import { httpsSink, reactWith, SECRET, SEND } from './helpers.js';

/**
 * `leakGuard: 'off'` turns off the checks of answers and outbound requests and the leak events, not
 * the redaction: a call's plaintext is tracked in every mode, and logs, events and recordings never
 * hold it ("In logs, events and recordings the value is always replaced").
 */
describe('the leak guard off', () => {
  let sink: Awaited<ReturnType<typeof httpsSink>>;
  beforeAll(async () => {
    sink = await httpsSink();
  });

  it("lets the answer and the code's request through, tells nothing, and still redacts console lines and errors", async () => {
    const emu: TestEmulator = await startEmulator({ inMemory: true, leakGuard: 'off' });
    const { answer, secret } = await reactWith(
      emu,
      `${SEND}\nconsole.log('key', args.secret);\nconst sent = await send({ writes: [args.secret] });\nreturn { raw: { echo: args.secret, sent } };`,
      { port: String(sink.port), ca: sink.ca },
    );
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.raw).toEqual({ echo: SECRET, sent: 200 });
    expect(sink.received.at(-1)?.body).toBe(SECRET);
    await eventually(() =>
      expect(emu.events).toContainEqual(expect.objectContaining({ type: 'console', text: `key {{ ${secret} }}` })),
    );
    const failed = await reactWith(emu, "throw new Error('bad key ' + args.secret);");
    expect(failed.answer.status).toBe(500);
    await eventually(() =>
      expect(emu.events.some((event) => event.type === 'invocation' && event.requestId === failed.traceId)).toBe(true),
    );
    expect(JSON.stringify(emu.events)).not.toContain(SECRET);
    expect(emu.events.filter((event) => event.type === 'leak')).toEqual([]);
  });

  it('records no plaintext: the recorder redacts by the call it came from', async () => {
    const dir = await tempDir();
    const emu = await startEmulator({ inMemory: true, leakGuard: 'off', record: { dir } });
    const { answer, secret } = await reactWith(
      emu,
      `${SEND}\nconst sent = await send({ path: '/charge', headers: { 'content-type': 'application/json' }, writes: [JSON.stringify({ key: args.secret })] });\nreturn { raw: { sent } };`,
      { port: String(sink.port), ca: sink.ca },
    );
    expect(answer.status, answer.text).toBe(200);
    expect(sink.received.at(-1)?.body).toContain(SECRET);
    await emu.dispose();
    const files = await readdir(dir);
    expect(files.length).toBeGreaterThan(0);
    const text = (await Promise.all(files.map((file) => readFile(path.join(dir, file), 'utf8')))).join('\n');
    expect(text).toContain(`{{ ${secret} }}`);
    expect(text).not.toContain(SECRET);
  });
});
