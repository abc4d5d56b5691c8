import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSvc, type Svc } from '../../src/testing/index.js';

/** svc/testing runs the leak guard in fail mode by default: a test sees a leak as a failed call. */
const PROJECT = fileURLToPath(new URL('./leaks-fixture/', import.meta.url));
const CARD = { number: '4000056655665556', expiration_month: 12, expiration_year: 2099 };
const config = {
  reactors: {
    leaky: { code: 'reactors/leaky.js' },
    masked: { code: 'reactors/masked.js' },
    pay: { code: 'reactors/pay.js' },
  },
};

describe('svc/testing and the leak guard', () => {
  let svc: Svc;
  let declared: Svc;
  beforeAll(async () => {
    svc = await startSvc({ config, projectDir: PROJECT });
    declared = await startSvc({ config, projectDir: PROJECT, leakGuard: { allowHosts: ['api.pay.example'] } });
  });
  afterAll(async () => {
    await svc?.stop();
    await declared?.stop();
  });

  it('fails a reactor that hands its card back (fail by default), passes one that masks it', async () => {
    await using t = await svc.tenant();
    const card = await t.client.tokens.create({ type: 'card', data: CARD });
    const leaky = await t.reactors.invoke('leaky', { card: `{{ ${card.id} }}` });
    expect(leaky.status).toBe(500);
    expect(leaky.body).toMatchObject({ type: 'urn:svc:problem:leak', leaks: [{ place: 'raw', form: 'base64' }] });
    expect(JSON.stringify(leaky.body)).not.toContain(CARD.number);
    const masked = await t.reactors.invoke('masked', { card: `{{ ${card.id} }}` });
    expect(masked.status, JSON.stringify(masked.body)).toBe(200);
    expect(masked.body).toEqual({ raw: { card: '****5556' } });
    expect(masked.logs).toEqual(['charging the card ending 5556']);
  });

  it("refuses a reactor's request with the card to a host not declared, lets it go to one declared", async () => {
    for (const [emulator, status] of [
      [svc, 500],
      [declared, 200],
    ] as const) {
      await using t = await emulator.tenant();
      t.destinations.intercept('https://api.pay.example').on('POST', '/charges').reply(201, { id: 'ch_1' });
      const card = await t.client.tokens.create({ type: 'card', data: CARD });
      const paid = await t.reactors.invoke('pay', { card: `{{ ${card.id} }}` });
      expect(paid.status, JSON.stringify(paid.body)).toBe(status);
      if (status === 200) {
        expect(paid.body).toEqual({ raw: { status: 201 } });
        expect(JSON.parse(t.destinations.calls()[0]?.body ?? '{}')).toMatchObject({ number: CARD.number });
      } else {
        expect(paid.body).toMatchObject({ type: 'urn:svc:problem:leak', leaks: [{ place: 'outbound' }] });
        expect(t.destinations.calls()).toEqual([]);
      }
    }
  });

  it('keeps leakGuard as a mode and leakGuardAllow working', async () => {
    await using warned = await startSvc({ config, projectDir: PROJECT, leakGuard: 'warn' });
    await using t = await warned.tenant();
    const card = await t.client.tokens.create({ type: 'card', data: CARD });
    expect((await t.reactors.invoke('leaky', { card: `{{ ${card.id} }}` })).status).toBe(200);
  });
});
