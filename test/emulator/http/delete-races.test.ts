/**
 * A DELETE racing a PUT, a PATCH or a call of the same reactor or proxy: the loser gets a clean
 * answer (the reactor or proxy is gone: 404; a call the DELETE caught running: 409), never a 500
 * ("was unloaded while ... loaded").
 */
import { describe, expect, it } from 'vitest';
import { sharedEmulator, unique } from '../../helpers/emulator.js';
import { startReceiver } from '../../helpers/receiver.js';

const code = (n: number) => `module.exports = async function (req) { return { raw: { n: ${n} } }; };`;
const transform = (n: number) =>
  `module.exports = async function (req) { return { ...req.args, headers: { ...req.args.headers, 'x-n': '${n}' } }; };`;
const ROUNDS = 12;

describe('a DELETE racing another request of the same reactor or proxy', () => {
  const emu = sharedEmulator();

  // One reactor the tenant keeps: its sandbox process stays up between rounds (a tenant's last
  // code deleted stops its processes, and each round would boot one).
  const keep = async () => {
    const kept = await emu().call('POST', '/reactors', {
      body: { name: unique('kept'), code: code(0), configuration: {} },
    });
    expect(kept.status, kept.text).toBe(201);
  };

  const clean = (statuses: number[], allowed: number[], label: string) => {
    for (const status of statuses) expect(allowed, `${label}: ${statuses.join(' ')}`).toContain(status);
  };

  it('reactor: PUT, PATCH or a call racing a DELETE answer 2xx or 404', async () => {
    const e = emu();
    await keep();
    const seen: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const racer of ['put', 'patch', 'call'] as const) {
        const name = unique('raced');
        const made = await e.call('POST', '/reactors', { body: { name, code: code(round), configuration: {} } });
        expect(made.status, made.text).toBe(201);
        const path = `/reactors/${made.body.id}`;
        const race =
          racer === 'put'
            ? e.call('PUT', path, { body: { name, code: code(round + 100), configuration: {} } })
            : racer === 'patch'
              ? e.call('PATCH', path, {
                  raw: JSON.stringify({ code: code(round + 200) }),
                  contentType: 'application/merge-patch+json',
                })
              : e.call('POST', `${path}/react`, { key: e.privateKey, body: {} });
        const [raced, deleted] = await Promise.all([race, e.call('DELETE', path)]);
        clean([raced.status], racer === 'call' ? [200, 404, 409] : [200, 204, 404], `${racer} ${raced.text}`);
        clean([deleted.status], [204, 404], `delete ${deleted.text}`);
        seen.push(raced.status);
      }
    }
    expect(seen.length).toBe(ROUNDS * 3);
  });

  it('proxy with transforms: PUT, PATCH or a call racing a DELETE answer 2xx or 404', async () => {
    const e = emu();
    await keep();
    const target = await startReceiver();
    for (let round = 0; round < ROUNDS; round++) {
      for (const racer of ['put', 'patch', 'call'] as const) {
        const body = {
          name: unique('raced'),
          destination_url: target.url,
          require_auth: false,
          request_transform: { code: transform(round) },
        };
        const made = await e.call('POST', '/proxies', { body });
        expect(made.status, made.text).toBe(201);
        const path = `/proxies/${made.body.id}`;
        const race =
          racer === 'put'
            ? e.call('PUT', path, { body: { ...body, request_transform: { code: transform(round + 100) } } })
            : racer === 'patch'
              ? e.call('PATCH', path, {
                  raw: JSON.stringify({ request_transform: { code: transform(round + 200) } }),
                  contentType: 'application/merge-patch+json',
                })
              : e.call('POST', '/proxy', { key: null, headers: { 'svc-proxy-key': made.body.key }, body: { a: 1 } });
        const [raced, deleted] = await Promise.all([race, e.call('DELETE', path)]);
        // A proxy call the DELETE overtook finds no proxy for its key: 401 (as any unknown key); one it
        // caught running answers 409 (deleted while it ran).
        clean([raced.status], racer === 'call' ? [200, 401, 404, 409] : [200, 204, 404], `${racer} ${raced.text}`);
        clean([deleted.status], [204, 404], `delete ${deleted.text}`);
      }
    }
  });
});
