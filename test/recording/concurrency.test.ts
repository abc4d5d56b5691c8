/**
 * Recording concurrent calls, and replaying one folder for two tenants at once: the file does not
 * depend on the order the calls ended in, and each tenant's replay answers only its own requests.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSvc, type Svc } from '../../src/testing/index.js';
import { bodyOf } from '../emulator/outbound/destination.js';
import { tempDir } from '../helpers/temp.js';

const PROJECT = fileURLToPath(new URL('./fixture/svc.yaml', import.meta.url));
const AMOUNTS = [5, 1, 4, 2, 3];

describe('concurrent calls recorded and replayed', () => {
  let svc: Svc;
  let destination: http.Server;
  /** Answers are held until `release` says which amount goes next (the order calls end in). */
  let waiting = new Map<number, () => void>();
  let arrived: () => void = () => {};

  beforeAll(async () => {
    destination = http.createServer(async (request, response) => {
      const sent = JSON.parse((await bodyOf(request)).toString());
      await new Promise<void>((resolve) => {
        waiting.set(sent.amount, resolve);
        arrived();
      });
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ id: `ch_${sent.amount}`, state: 'paid' }));
    });
    await new Promise<void>((resolve) => destination.listen(0, '127.0.0.1', resolve));
    process.env.SVC_RECORDING_DESTINATION = `http://127.0.0.1:${(destination.address() as AddressInfo).port}`;
    svc = await startSvc({ config: PROJECT, leakGuard: 'warn' });
  });

  afterAll(async () => {
    await svc?.stop();
    destination?.closeAllConnections();
    destination?.close();
  });

  /** Sends every amount at once, and lets the destination answer them in `order`. */
  async function run(t: Awaited<ReturnType<Svc['tenant']>>, card: string, order: number[]) {
    waiting = new Map();
    const all = new Promise<void>((resolve) => {
      arrived = () => waiting.size === AMOUNTS.length && resolve();
    });
    const calls = AMOUNTS.map((amount) =>
      t.proxies.invoke('charges', { method: 'POST', path: '/v1/charges', body: { amount, card: `{{ ${card} }}` } }),
    );
    await all;
    for (const amount of order) {
      waiting.get(amount)?.();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return (await Promise.all(calls)).map((answer) => answer.body);
  }

  it('two recordings of the same calls ending in other orders are byte-identical; two tenants replay one folder at once', async () => {
    const t = await svc.tenant();
    const card = await t.client.tokens.create({ type: 'token', data: '4242424242424242' });
    const dirs = [await tempDir(), await tempDir()];
    for (const [at, order] of [AMOUNTS, [...AMOUNTS].reverse()].entries()) {
      const recording = await t.destinations.record(dirs[at]!);
      expect(await run(t, card.id, order)).toEqual(AMOUNTS.map((amount) => ({ id: `ch_${amount}`, state: 'paid' })));
      await recording.stop();
    }
    const [file] = await readdir(dirs[0]!);
    const texts = await Promise.all(dirs.map((dir) => readFile(path.join(dir, file!), 'utf8')));
    expect(texts[1]).toBe(texts[0]);
    await t.dispose();

    // Two tenants replay the folder at once, the destination gone: each takes every answer once.
    destination.closeAllConnections();
    await new Promise<void>((resolve) => destination.close(() => resolve()));
    const tenants = [await svc.tenant(), await svc.tenant()];
    const replays = await Promise.all(tenants.map((tenant) => tenant.destinations.replay(dirs[0]!)));
    const answers = await Promise.all(
      tenants.map(async (tenant) => {
        const token = await tenant.client.tokens.create({ type: 'token', data: '4242424242424242' });
        return Promise.all(
          AMOUNTS.map((amount) =>
            tenant.proxies.invoke('charges', {
              method: 'POST',
              path: '/v1/charges',
              body: { amount, card: `{{ ${token.id} }}` },
            }),
          ),
        );
      }),
    );
    for (const answered of answers)
      expect(answered.map((answer) => answer.body)).toEqual(
        AMOUNTS.map((amount) => ({ id: `ch_${amount}`, state: 'paid' })),
      );
    // A tenant with no replay of its own goes to the network (gone): not answered from the others'.
    const outsider = await svc.tenant();
    const token = await outsider.client.tokens.create({ type: 'token', data: '4242424242424242' });
    const missed = await outsider.proxies.invoke('charges', {
      method: 'POST',
      path: '/v1/charges',
      body: { amount: 1, card: `{{ ${token.id} }}` },
    });
    expect(missed.status).toBe(502);
    expect(JSON.stringify(missed.body)).not.toContain('replay-miss');
    for (const replay of replays) await replay.stop();
    for (const tenant of [...tenants, outsider]) await tenant.dispose();
  });
});
