import { describe, expect, it } from 'vitest';
import type { Reactor } from '../../src/api/types.js';
import { createEmulator } from '../../src/emulator/index.js';
import { createTenant, startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { startReceiver } from '../helpers/receiver.js';

const CODE = `module.exports = async function () { return { raw: { at: Date.now() } }; };`;

/** A tenant's reactor, invoked asynchronously towards `callbackUrl`; returns the result id. */
async function invokeAsync(emu: TestEmulator, keys: { management: string; private: string }, callbackUrl: string) {
  const created = await emu.call<Reactor>('POST', '/reactors', {
    key: keys.management,
    body: { name: 'stamp', code: CODE, configuration: {} },
  });
  expect(created.status, created.text).toBe(201);
  const accepted = await emu.call<{ id: string }>('POST', `/reactors/${created.body.id}/react`, {
    key: keys.private,
    body: { args: {}, callback_url: callbackUrl },
  });
  expect(accepted.status, accepted.text).toBe(202);
  return { reactorId: created.body.id, requestId: accepted.body.id };
}

describe('emulator.tenants.clock', () => {
  it("runs one tenant's due webhook retries when its clock advances, and leaves another tenant's waiting", async () => {
    // Retries an hour apart: real time delivers none of them while the test runs.
    const emu = await startEmulator({ inMemory: true, webhooks: { attempts: 4, retryBaseMs: 3_600_000 } });
    const [a, b] = await Promise.all([createTenant(emu, 'a'), createTenant(emu, 'b')]);
    const keysOf = (tenant: typeof a) => ({ management: tenant.management_key, private: tenant.private_key });
    const failing = async () => startReceiver((n) => (n <= 2 ? 503 : 200));
    const [receiverA, receiverB] = await Promise.all([failing(), failing()]);
    const mine = await invokeAsync(emu, keysOf(a), receiverA.url);
    await invokeAsync(emu, keysOf(b), receiverB.url);
    await Promise.all([receiverA.waitFor(1), receiverB.waitFor(1)]);
    const clock = emu.emulator.tenants.clock(a.id);
    // One hour: the first retry (due 1 h after the first attempt) ran and failed; the next is 2 h after it.
    await clock.advance(3_600_000);
    expect(receiverA.received).toHaveLength(2);
    await clock.advance(2 * 3_600_000);
    expect(receiverA.received).toHaveLength(3);
    // Every attempt of one delivery, in order: the same event id.
    expect(new Set(receiverA.received.map((delivery) => delivery.headers['svc-webhook-id'])).size).toBe(1);
    const result = await emu.call('GET', `/reactors/${mine.reactorId}/results/${mine.requestId}`, {
      key: a.private_key,
    });
    expect(result.body.delivery).toMatchObject({ status: 'delivered', attempts: 3, last_status: 200 });
    // The reactor ran before the clock moved: it read real time then; its result's times are the tenant's.
    expect(Date.parse(result.body.completed_at)).toBeLessThan(Date.now() + 60_000);
    expect(receiverB.received).toHaveLength(1);
    await emu.emulator.tenants.settled(a.id);
    expect(clock.now().getTime() - Date.now()).toBeGreaterThan(2.9 * 3_600_000);
    expect(emu.emulator.tenants.clock(b.id).now().getTime() - Date.now()).toBeLessThan(60_000);
  });

  it('refuses an unknown tenant, and a clock asked of an emulator not started yet says so', async () => {
    const emu = await startEmulator({ inMemory: true });
    await expect(emu.emulator.tenants.clock('no-such-tenant').advance(1)).rejects.toThrow(/No tenant no-such-tenant/);
    await expect(emu.emulator.tenants.clock(emu.tenantId).advance(Number.NaN)).rejects.toThrow(/0 or more/);
    const early = createEmulator({ inMemory: true, port: 0 });
    expect(() => early.tenants.clock(emu.tenantId).now()).toThrow(/not started/);
    await early.dispose();
  });
});
