import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSvc, type Svc } from '../../src/testing/index.js';
import { bodyOf, httpsDestination } from '../emulator/outbound/destination.js';
import { tempDir } from '../helpers/temp.js';

const PROJECT = fileURLToPath(new URL('./fixture/svc.yaml', import.meta.url));
const CARD = '4242424242424242';
const API_KEY = 'sk_test_configured_key_123';

/** A loopback destination that answers a charge with its id, and echoes the card and auth it got. */
function chargeServer(): http.Server {
  return http.createServer(async (request, response) => {
    const sent = JSON.parse((await bodyOf(request)).toString() || '{}');
    response.setHeader('content-type', 'application/json');
    // Volatile: never in a cassette.
    response.setHeader('x-request-id', randomUUID());
    response.end(
      JSON.stringify({ id: `ch_${sent.amount}`, state: 'paid', card: sent.card, auth: request.headers.authorization }),
    );
  });
}

describe('recording and replaying destinations (svc/testing)', () => {
  let svc: Svc;
  let destination: http.Server;
  let destinationUrl: string;

  beforeAll(async () => {
    destination = chargeServer();
    await new Promise<void>((resolve) => destination.listen(0, '127.0.0.1', resolve));
    destinationUrl = `http://127.0.0.1:${(destination.address() as AddressInfo).port}`;
    process.env.SVC_RECORDING_DESTINATION = destinationUrl;
    // warn: the reactor sends its card to a destination on purpose (the guard's outbound check would refuse it).
    svc = await startSvc({ config: PROJECT, leakGuard: 'warn' });
  });

  afterAll(async () => {
    await svc?.stop();
    destination?.closeAllConnections();
    destination?.close();
  });

  it('a proxy with both transforms: recorded redacted, re-recorded byte-identically, replayed with the destination stopped', async () => {
    const dirs = [await tempDir(), await tempDir()];
    const t = await svc.tenant();
    const card = await t.client.tokens.create({ type: 'token', data: CARD });
    const run = async () => {
      const answers = [];
      for (const amount of [42, 7, 42])
        answers.push(
          await t.proxies.invoke('charges', {
            method: 'POST',
            path: '/v1/charges',
            body: { amount, card: `{{ ${card.id} }}` },
          }),
        );
      return answers.map((answer) => ({ status: answer.status, body: answer.body }));
    };
    const live = [];
    for (const dir of dirs) {
      const recording = await t.destinations.record(dir);
      live.push(await run());
      await recording.stop();
    }
    expect(live[0]).toEqual([
      { status: 200, body: { id: 'ch_42', state: 'paid' } },
      { status: 200, body: { id: 'ch_7', state: 'paid' } },
      { status: 200, body: { id: 'ch_42', state: 'paid' } },
    ]);
    expect(live[1]).toEqual(live[0]);
    const [file] = await readdir(dirs[0]!);
    expect(file).toBe(`http_127.0.0.1_${(destination.address() as AddressInfo).port}.json`);
    const text = await readFile(path.join(dirs[0]!, file!), 'utf8');
    expect(text).not.toContain(CARD);
    expect(text).not.toContain(API_KEY);
    expect(text).not.toMatch(/x-request-id|"date"|content-length/);
    const cassette = JSON.parse(text);
    expect(cassette.exchanges).toHaveLength(3);
    const first = cassette.exchanges[0];
    expect(first.request).toMatchObject({ method: 'POST', path: '/v1/charges', query: '' });
    expect(first.request.headers.authorization).toBe('[masked]');
    expect(JSON.parse(first.request.body)).toEqual({ amount: 42, card: `{{ ${card.id} }}`, transformed: true });
    expect(JSON.parse(first.answer.body)).toEqual({
      id: 'ch_42',
      state: 'paid',
      card: `{{ ${card.id} }}`,
      auth: 'Bearer [configuration]',
    });
    // Re-recording the unchanged run wrote the same bytes.
    expect(await readFile(path.join(dirs[1]!, file!), 'utf8')).toBe(text);
    await t.dispose();

    // The destination gone, another tenant (another token id for the same card) replays the cassette.
    destination.closeAllConnections();
    await new Promise<void>((resolve) => destination.close(() => resolve()));
    const offline = await svc.tenant();
    const other = await offline.client.tokens.create({ type: 'token', data: CARD });
    expect(other.id).not.toBe(card.id);
    const replay = await offline.destinations.replay(dirs[0]!);
    const replayed = [];
    for (const amount of [42, 7, 42])
      replayed.push(
        await offline.proxies.invoke('charges', {
          method: 'POST',
          path: '/v1/charges',
          body: { amount, card: `{{ ${other.id} }}` },
        }),
      );
    expect(replayed.map((answer) => ({ status: answer.status, body: answer.body }))).toEqual(live[0]);
    // A fourth identical request: its recorded answers are used up.
    const missed = await offline.proxies.invoke('charges', {
      method: 'POST',
      path: '/v1/charges',
      body: { amount: 42, card: `{{ ${other.id} }}` },
    });
    expect(missed.status, JSON.stringify(missed.body)).toBe(502);
    expect((missed.body as any).proxy_error).toMatchObject({ type: 'urn:svc:problem:replay-miss', method: 'POST' });
    expect((missed.body as any).proxy_error.detail).toContain(
      `POST ${destinationUrl}/v1/charges has no recorded answer in`,
    );
    expect((missed.body as any).proxy_error.detail).toContain(file);
    expect(JSON.stringify(missed.body)).not.toContain(CARD);
    await replay.stop();
    await offline.dispose();
  });

  it('a reactor’s https requests: recorded, then replayed; on a miss fail, passthrough and record', async () => {
    const dir = await tempDir();
    let hits = 0;
    const api = await httpsDestination(async (request, response) => {
      hits += 1;
      const sent = JSON.parse((await bodyOf(request)).toString());
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ path: request.url, got: sent.card, n: sent.n }));
    });
    const t = await svc.tenant();
    const card = await t.client.tokens.create({ type: 'token', data: CARD });
    const pay = async (n: number, path = '/v1/pay') =>
      (await t.reactors.invoke('pay', {
        url: `${api.url}${path}`,
        body: { n, card: `{{ ${card.id} }}` },
        ca: api.ca,
      })) as {
        body: any;
      };
    const recording = await t.destinations.record(dir);
    const recorded = await pay(1);
    expect((recorded.body as any).raw).toEqual({
      status: 200,
      text: JSON.stringify({ path: '/v1/pay', got: CARD, n: 1 }),
    });
    await recording.stop();
    const [file] = await readdir(dir);
    const text = await readFile(path.join(dir, file!), 'utf8');
    expect(text).not.toContain(CARD);
    expect(text).toContain(`{{ ${card.id} }}`);

    const seen = hits;
    const replay = await t.destinations.replay(dir);
    // Answered from the cassette: as recorded, the card the destination echoed as its expression.
    const replayedRaw = { status: 200, text: JSON.stringify({ path: '/v1/pay', got: `{{ ${card.id} }}`, n: 1 }) };
    expect((await pay(1)).body.raw).toEqual(replayedRaw);
    expect(hits).toBe(seen);
    const failed = await pay(2);
    expect((failed.body as any).raw.code).toBe('ERR_SVC_REPLAY_MISS');
    expect((failed.body as any).raw.error).toContain(`POST ${api.url}/v1/pay has no recorded answer`);
    await replay.stop();

    const through = await t.destinations.replay(dir, { onMiss: 'passthrough' });
    expect(JSON.parse((await pay(3)).body.raw.text)).toMatchObject({ n: 3 });
    expect(hits).toBe(seen + 1);
    await through.stop();
    expect((await readFile(path.join(dir, file!), 'utf8')).includes('"n\\":3')).toBe(false);

    const adding = await t.destinations.replay(dir, { onMiss: 'record' });
    expect(JSON.parse((await pay(4, '/v1/other')).body.raw.text)).toMatchObject({ n: 4, path: '/v1/other' });
    expect((await pay(1)).body.raw).toEqual(replayedRaw);
    await adding.stop();
    expect(hits).toBe(seen + 2);
    const grown = JSON.parse(await readFile(path.join(dir, file!), 'utf8'));
    expect(grown.exchanges.map((exchange: { request: { path: string } }) => exchange.request.path)).toEqual([
      '/v1/other',
      '/v1/pay',
    ]);
    await t.dispose();
  });

  it('a folder that cannot be used is one clear error', async () => {
    const t = await svc.tenant();
    await expect(t.destinations.replay('/nonexistent/cassettes')).rejects.toThrow(
      'svc/testing: replay(dir): /nonexistent/cassettes cannot be read as a folder of cassettes: it does not exist.',
    );
    await t.dispose();
  });
});
