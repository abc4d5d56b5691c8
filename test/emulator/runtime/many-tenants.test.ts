/**
 * Many active tenants without thrash: sandbox processes are as many as the memory budget holds
 * (RuntimeOptions.memoryBudgetMb, each process counted at its measured memory), not a fixed 8; a
 * tenant's idle process gives its memory back after `keepWarmMs`.
 */
import { describe, expect, it } from 'vitest';
import type { Runtime } from '../../../src/emulator/runtime/index.js';
import { eventually } from '../../helpers/wait.js';
import { freshId, invoke, runtime } from './helpers.js';

const CODE =
  'let calls = 0;\nmodule.exports = async (req) => ({ raw: { tenant: req.args.tenant, calls: ++calls } });\n';

/** A reactor of each of `count` tenants, loaded one after the other. */
async function tenants(rt: Runtime, count: number) {
  const instances = [];
  for (let i = 0; i < count; i++)
    instances.push(
      await rt.load({ id: freshId(), version: 1, code: CODE, filename: 'reactors/rr.js', tenant: `tenant-${i}` }),
    );
  return instances;
}

describe('sandbox processes are sized by memory', () => {
  it('10 tenants called round-robin keep their processes (the old budget of 8 booted one on every call)', async () => {
    const rt = runtime();
    const instances = await tenants(rt, 10);
    for (const [i, instance] of instances.entries()) await invoke(instance, { args: { tenant: i } });
    const pids = [...rt.pids].sort();
    const answers = [];
    for (let pass = 0; pass < 3; pass++)
      for (const [i, instance] of instances.entries()) answers.push(await invoke(instance, { args: { tenant: i } }));
    expect([...rt.pids].sort()).toEqual(pids);
    expect(rt.processCount).toBe(10);
    // Module state lived on: every call of a tenant's reactor ran in the process of its first.
    expect(answers.slice(-10).map((answer) => (answer.value as { raw: { calls: number } }).raw.calls)).toEqual(
      Array(10).fill(4),
    );
  }, 60_000);

  it('a budget no second process fits in: each tenant’s process makes room for the next (no more than one runs)', async () => {
    const rt = runtime({ memoryBudgetMb: 1 });
    const instances = await tenants(rt, 2);
    expect(rt.processCount).toBe(1);
    for (const [i, instance] of instances.entries()) {
      const answer = await invoke(instance, { args: { tenant: i } });
      // Its process was stopped to make room for the other tenant's: module state began again.
      expect(answer.value).toEqual({ raw: { tenant: i, calls: 1 } });
      expect(rt.processCount).toBe(1);
    }
  }, 60_000);

  it('a tenant’s process idle for keepWarmMs stops; its next call loads the code again', async () => {
    const rt = runtime({ keepWarmMs: 100 });
    const [instance] = await tenants(rt, 1);
    expect((await invoke(instance!, { args: { tenant: 0 } })).value).toEqual({ raw: { tenant: 0, calls: 1 } });
    await eventually(() => expect(rt.processCount).toBe(0), 10_000);
    expect((await invoke(instance!, { args: { tenant: 0 } })).value).toEqual({ raw: { tenant: 0, calls: 1 } });
  });
});

describe('a tenant’s extra process makes no room', () => {
  it('a tenant whose calls hold its process starts no extra by stopping another tenant’s idle one', async () => {
    const rt = runtime({ maxProcesses: 2 });
    const [quiet] = await tenants(rt, 1);
    expect((await invoke(quiet!, { args: { tenant: 0 } })).value).toEqual({ raw: { tenant: 0, calls: 1 } });
    const busy = await rt.load({
      id: freshId(),
      version: 1,
      // Holds its process: a loop that never yields, for as many iterations as it is given.
      code: 'module.exports = async (req) => { let n = 0; for (let i = 0; i < req.args.loops; i++) n += i % 7; return { raw: n }; };\n',
      filename: 'reactors/busy.js',
      tenant: 'tenant-busy',
    });
    // Two calls at once: the second would take an extra process, but there is no room but the quiet tenant's.
    const held = invoke(busy, { args: { loops: 8e8 } }, { timeoutMs: 60_000 });
    // The second call comes once the first holds the process (it answers no probe: not responsive).
    await expect.poll(() => rt.heldPids.length, { timeout: 30_000, interval: 10 }).toBe(1);
    const answers = await Promise.all([held, invoke(busy, { args: { loops: 1 } }, { timeoutMs: 60_000 })]);
    expect(answers.map((answer) => answer.value !== undefined)).toEqual([true, true]);
    // The quiet tenant's process lived on: its module state too.
    expect((await invoke(quiet!, { args: { tenant: 0 } })).value).toEqual({ raw: { tenant: 0, calls: 2 } });
  }, 120_000);
});
