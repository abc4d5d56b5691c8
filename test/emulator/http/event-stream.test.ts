import { request } from 'undici';
import { describe, expect, onTestFinished, test } from 'vitest';
import { createHttpServer } from '../../../src/emulator/http/front.js';
import { listen } from '../../../src/emulator/http/listen.js';
import { createTenant, startEmulator } from '../../helpers/emulator.js';
import { createReactor, emulatorParts, parseEvents } from '../../helpers/event-stream.js';
import { eventually } from '../../helpers/wait.js';

const TALKS = (word: string) => `module.exports = async (req) => {
  console.log('${word}', req.args.n ?? 0);
  if (req.args.fail) throw new Error('broken');
  return { raw: { ok: true } };
};
`;

/** Two tenants, each with a reactor that logs, each invoked once. */
async function twoTenants() {
  const emu = await startEmulator({ inMemory: true });
  const other = await createTenant(emu);
  const mine = await createReactor(emu, emu.managementKey, 'mine', TALKS('mine says'));
  const theirs = await createReactor(emu, other.management_key, 'theirs', TALKS('theirs says'));
  expect(
    (await emu.call('POST', `/reactors/${mine}/react`, { key: emu.privateKey, body: { args: { n: 1 } } })).status,
  ).toBe(200);
  const called = await emu.call('POST', `/reactors/${theirs}/react`, {
    key: other.private_key,
    body: { args: { n: 2 } },
  });
  expect(called.status).toBe(200);
  return { emu, other, mine, theirs };
}

describe('GET /_emulator/events', () => {
  test('each management key sees its own tenant only; without follow the recent events come and the answer ends', async () => {
    const { emu, other } = await twoTenants();
    await eventually(() =>
      expect(emu.events.some((event) => event.type === 'console' && event.text === 'theirs says 2')).toBe(true),
    );
    const answer = await emu.call('GET', '/_emulator/events');
    expect(answer.status).toBe(200);
    expect(String(answer.headers['content-type'])).toMatch(/^text\/event-stream/);
    const events = parseEvents(answer.text);
    expect(events).toContainEqual(expect.objectContaining({ type: 'console', source: 'mine', text: 'mine says 1' }));
    expect(events).toContainEqual(expect.objectContaining({ type: 'invocation', name: 'mine', status: 200 }));
    expect(events.every((event) => 'tenantId' in event && event.tenantId === emu.tenantId)).toBe(true);
    expect(answer.text).not.toContain('theirs');
    expect(answer.text).not.toContain(emu.managementKey);
    expect(answer.text).not.toContain(emu.privateKey);

    const theirs = parseEvents((await emu.call('GET', '/_emulator/events', { key: other.management_key })).text);
    expect(theirs).toContainEqual(
      expect.objectContaining({ type: 'console', source: 'theirs', text: 'theirs says 2' }),
    );
    expect(theirs.some((event) => JSON.stringify(event).includes('mine'))).toBe(false);
  });

  test('401 without a key, 403 for a private key, 400 for a status filter it cannot read', async () => {
    const emu = await startEmulator({ inMemory: true });
    const none = await emu.call('GET', '/_emulator/events', { key: null });
    expect(none.status).toBe(401);
    expect(String(none.headers['content-type'])).toMatch(/problem\+json/);
    expect((await emu.call('GET', '/_emulator/events', { key: emu.privateKey })).status).toBe(403);
    const bad = await emu.call('GET', '/_emulator/events?status=5x');
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/5xx/);
  });

  test('filters by reactor (name or id), status and request id at the source', async () => {
    const emu = await startEmulator({ inMemory: true });
    const first = await createReactor(emu, emu.managementKey, 'first', TALKS('first'));
    const second = await createReactor(emu, emu.managementKey, 'second', TALKS('second'));
    await emu.call('POST', `/reactors/${first}/react`, { key: emu.privateKey, body: { args: {} } });
    const failed = await emu.call('POST', `/reactors/${second}/react`, {
      key: emu.privateKey,
      body: { args: { fail: true } },
    });
    expect(failed.status).toBeGreaterThanOrEqual(400);
    await eventually(() => expect(emu.events.filter((event) => event.type === 'console').length === 2).toBe(true));

    for (const given of [first, 'first']) {
      const events = parseEvents((await emu.call('GET', `/_emulator/events?reactor=${given}`)).text);
      expect(events).toContainEqual(expect.objectContaining({ type: 'console', source: 'first' }));
      expect(events).toContainEqual(expect.objectContaining({ type: 'invocation', name: 'first' }));
      expect(events.some((event) => JSON.stringify(event).includes('second'))).toBe(false);
    }
    const byId = parseEvents((await emu.call('GET', `/_emulator/events?reactor=${first}`)).text);
    expect(byId).toContainEqual(expect.objectContaining({ type: 'request', path: `/reactors/${first}/react` }));

    const errors = parseEvents(
      (await emu.call('GET', `/_emulator/events?status=${failed.status >= 500 ? '5xx' : '4xx'}`)).text,
    );
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((event) => 'status' in event && event.status === failed.status)).toBe(true);
    expect(errors).toContainEqual(expect.objectContaining({ type: 'invocation', name: 'second' }));

    const traceId = String(failed.headers['svc-trace-id']);
    const ofCall = parseEvents((await emu.call('GET', `/_emulator/events?request=${traceId}`)).text);
    expect(ofCall.map((event) => event.type).sort()).toEqual(['console', 'invocation', 'request']);
  });

  test('?follow=1 streams new events, and a stop ends the stream rather than waiting for it', async () => {
    const emu = await startEmulator({ inMemory: true });
    const id = await createReactor(emu, emu.managementKey, 'live', TALKS('live'));
    const stream = await request(`${emu.url}/_emulator/events?follow=1&reactor=live`, {
      headers: { 'svc-api-key': emu.managementKey },
    });
    onTestFinished(() => {
      stream.body.destroy();
    });
    expect(stream.statusCode).toBe(200);
    let text = '';
    const ended = new Promise<void>((resolve, reject) => {
      stream.body.on('data', (chunk: Buffer) => (text += chunk.toString()));
      stream.body.on('end', resolve);
      stream.body.on('error', reject);
    });
    await emu.call('POST', `/reactors/${id}/react`, { key: emu.privateKey, body: { args: { n: 7 } } });
    await eventually(() => expect(text.includes('live 7')).toBe(true));
    expect(parseEvents(text)).toContainEqual(expect.objectContaining({ type: 'console', text: 'live 7' }));
    await emu.dispose();
    await ended;
  });

  test('a client that goes away is unsubscribed', async () => {
    const { hub, services, pipeline, eventLog, close } = await emulatorParts();
    const server = createHttpServer({ services, pipeline, emit: hub.publish, eventLog });
    onTestFinished(async () => {
      await server.closeGracefully();
      await close();
    });
    const url = await listen(server, 0, '127.0.0.1');
    const { keys } = await services.tenants.bootstrap({});
    const controller = new AbortController();
    const stream = await request(`${url}/_emulator/events?follow=1`, {
      headers: { 'svc-api-key': keys.managementKey! },
      signal: controller.signal,
    });
    expect(stream.statusCode).toBe(200);
    stream.body.on('error', () => {});
    expect(eventLog.following).toBe(1);
    controller.abort();
    await eventually(() => expect(eventLog.following).toBe(0));
  });
});
