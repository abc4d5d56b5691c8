/**
 * Node's process-wide EventEmitter defaults (`defaultMaxListeners`, `captureRejections`) cannot be
 * frozen: svc puts them back around every call. A version's top-level timer runs with no call: what
 * it sets is put back as its callback ends, so that a call running meanwhile (another version's, or
 * in svc/testing another tenant's) never reads it.
 */
import { describe, expect, it } from 'vitest';
import { freshId, invoke, runtime } from './helpers.js';

describe("a top-level timer and the process's EventEmitter defaults", () => {
  it('what a top-level interval sets is not what a call running meanwhile reads', async () => {
    const rt = runtime();
    const tenant = freshId('tenant');
    const read = `const EE = Object.getPrototypeOf(require('stream').Stream);
      const seen = () => ({ maxListeners: EE.defaultMaxListeners, captureRejections: EE.captureRejections });`;
    const victim = await rt.load({
      id: freshId(),
      version: 1,
      filename: 'reactors/victim.js',
      tenant,
      code: `${read}
        module.exports = async () => {
          const before = seen();
          const during = [];
          for (let i = 0; i < 10; i++) { await new Promise((done) => setTimeout(done, 10)); during.push(seen()); }
          return { before, during };
        };`,
    });
    const untouched = (await invoke(victim)).value as { before: unknown };
    const tamperer = await rt.load({
      id: freshId(),
      version: 1,
      filename: 'reactors/tamperer.js',
      tenant,
      code: `${read}
        let ticks = 0;
        setInterval(() => { ticks++; EE.defaultMaxListeners = 1; EE.captureRejections = true; }, 1);
        module.exports = async () => ticks;`,
    });
    await invoke(tamperer);
    const after = (await invoke(victim)).value as { before: unknown; during: unknown[] };
    expect(after.before).toEqual(untouched.before);
    for (const seen of after.during) expect(seen).toEqual(untouched.before);
    expect((await invoke(tamperer)).value).toBeGreaterThan(0);
  });
});
