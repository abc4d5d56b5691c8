/**
 * The realm's first Error (the constructor Node's own errors extend, not SES's tamed one): V8 reads
 * its `prepareStackTrace` and `stackTraceLimit` for every error of the process, so one owner that
 * reached it could read every other owner's errors (and the host's) and run code in their calls.
 * Needs the build (`npm run build`).
 */
import { describe, expect, it } from 'vitest';
import type { Runtime } from '../../../src/emulator/runtime/index.js';
import { freshId, invoke, sharedRuntime } from './helpers.js';

function loadFor(rt: Runtime, tenant: string, code: string, filename: string) {
  return rt.load({ id: freshId(), version: 1, code, filename, tenant });
}

/**
 * Reaches the first Error through the AbortError a stream raises, and tries the changes `tries`
 * names (the code of an object of them, by name).
 */
const thief = (tries: string) => `const stolen = [];
module.exports = async (req) => {
  if (req.args.report) return stolen;
  const stream = require('stream');
  const abortError = await new Promise((resolve) => {
    const s = new stream.PassThrough();
    s.on('error', resolve);
    stream.addAbortSignal(AbortSignal.abort(), s);
  });
  const FirstError = Object.getPrototypeOf(abortError.constructor);
  const hook = (error, sites) => {
    try { stolen.push(String(error && error.message) + ' @ ' + sites.map((s) => s.getFileName()).join(' ')); } catch {}
    return 'hooked';
  };
  const capture = function (target) { stolen.push('captured ' + String(target && target.message)); };
  const changed = [];
  for (const [name, change] of Object.entries(${tries})) {
    try { change(); changed.push(name); } catch {}
  }
  return { changed, frozen: Object.isFrozen(FirstError), tamed: FirstError === Object.getPrototypeOf(TypeError) };
};`;

const HOOKS = `{
  'assign prepareStackTrace': () => { FirstError.prepareStackTrace = hook; },
  'define prepareStackTrace': () => Object.defineProperty(FirstError, 'prepareStackTrace', { get: () => hook, set() {} }),
  'assign captureStackTrace': () => { FirstError.captureStackTrace = capture; },
  'add a static': () => { FirstError.shared = 'mine'; },
  'extend captureStackTrace': () => { FirstError.captureStackTrace.shared = 'mine'; },
  'extend prepareStackTrace': () => { FirstError.prepareStackTrace.shared = 'mine'; },
}`;

/** V8 captures no frame at all while stackTraceLimit is not a number it can read as data. */
const LIMITS = `{
  'assign stackTraceLimit': () => { FirstError.stackTraceLimit = 0; },
  'define stackTraceLimit': () => Object.defineProperty(FirstError, 'stackTraceLimit', { get: () => 0, set() {} }),
}`;

/** Makes an error of its own and has the host throw one, and reads both stacks. */
const VICTIM = `module.exports = async () => {
  const mine = new Error('the victim secret');
  let host;
  try { Buffer.alloc(-1); } catch (error) { host = error; }
  return { mine: String(mine.stack), host: String(host.stack), hostCode: host.code };
};`;

describe("the realm's first Error", () => {
  const rt = sharedRuntime();

  it.each([
    ['prepareStackTrace and captureStackTrace', HOOKS],
    ['stackTraceLimit', LIMITS],
  ])(
    "cannot be changed by one owner (its %s) to read or change another owner's errors or the host's",
    async (_, tries) => {
      const tenant = freshId('tenant');
      const meddler = await loadFor(rt(), tenant, thief(tries), 'reactors/thief.js');
      const victim = await loadFor(rt(), tenant, VICTIM, 'reactors/victim.js');
      const tried = (await invoke(meddler, { args: {} })).value;
      const seen = (await invoke(victim)).value as { mine: string; host: string; hostCode: string };
      // Nothing of the victim's call, nor of the host's, went through the thief's code.
      expect((await invoke(meddler, { args: { report: true } })).value).toEqual([]);
      // Both stacks are as ever: the victim's own frames, the host's (Node's) error without the host's.
      expect(seen.mine).toMatch(/^Error: the victim secret\n {4}at .*reactors\/victim\.js:2:\d+\)?$/);
      expect(seen.hostCode).toBe('ERR_OUT_OF_RANGE');
      expect(seen.host).toMatch(/^RangeError \[ERR_OUT_OF_RANGE\]: .*\n {4}at .*reactors\/victim\.js:4:\d+\)?$/);
      // The thief reaches it (it is not SES's Error) but changes nothing of it.
      expect(tried).toEqual({ changed: [], frozen: true, tamed: false });
      expect(meddler.processCount).toBe(1);
      expect(victim.processCount).toBe(1);
    },
  );
});
