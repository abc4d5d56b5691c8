/**
 * A code version replaced by a newer one leaves its sandbox process once its calls are done: nothing
 * of it stays loaded (its compartment, its top-level timers), however often the code is saved.
 * Needs the build (`npm run build`): the sandbox process runs from dist/.
 */
import { describe, expect, it } from 'vitest';
import type { Instance, LogEntry } from '../../../src/emulator/runtime/index.js';
import { FILENAME, freshId, invoke, runtime, sleep } from './helpers.js';

/** Top-level code that logs a tick every 20 ms for as long as the version is loaded. */
const ticking = (name: string) => `setInterval(() => console.log('${name} tick'), 20);
module.exports = async (req) => {
  await new Promise((resolve) => setTimeout(resolve, req.args.ms));
  return '${name}';
};`;

async function unloaded(instance: Instance): Promise<void> {
  for (let i = 0; i < 100 && instance.processCount > 0; i++) await sleep(20);
  expect(instance.processCount).toBe(0);
}

describe('releasing replaced versions', () => {
  it('drops a replaced version from its process once its calls are done, its timers with it', async () => {
    const seen: LogEntry[] = [];
    const rt = runtime({ onLog: (entry) => seen.push(entry) });
    const ticks = (name: string) => seen.filter((entry) => entry.text === `${name} tick`).length;
    const id = freshId('release');
    const v1 = await rt.load({ id, version: 1, code: ticking('v1'), filename: FILENAME });
    const inFlight = invoke(v1, { args: { ms: 300 } });
    await sleep(50);
    const v2 = await rt.load({ id, version: 2, code: ticking('v2'), filename: FILENAME });
    // Still running a call: the old version stays loaded.
    expect(v1.processCount).toBe(1);
    expect((await inFlight).value).toBe('v1');
    await unloaded(v1);
    // Its unload reached the process before the tick after the next: no tick of v1 comes after that.
    await sleep(60);
    const v1Ticks = ticks('v1');
    const v2Ticks = ticks('v2');
    await sleep(150);
    expect(ticks('v1')).toBe(v1Ticks);
    expect(ticks('v2')).toBeGreaterThan(v2Ticks);
    expect(v2.processCount).toBe(1);
  });

  it('keeps only the current version loaded over many saves', async () => {
    const rt = runtime();
    const id = freshId('saves');
    const versions: Instance[] = [];
    for (let version = 1; version <= 20; version++) {
      const instance = await rt.load({
        id,
        version,
        code: `module.exports = async () => ${version};`,
        filename: FILENAME,
      });
      expect((await invoke(instance)).value).toBe(version);
      versions.push(instance);
    }
    for (const old of versions.slice(0, -1)) await unloaded(old);
    expect(versions.at(-1)!.processCount).toBe(1);
    expect(rt.processCount).toBe(1);
  });
});
