import { describe, expect, it } from 'vitest';
import { createApplication, sharedEmulator, unique } from '../../helpers/emulator.js';

/**
 * HTTP as the platform's clients send it (issue 35, item 6): the vendor's JS SDK creates and lists
 * at `/applications/` (a trailing slash), posts body-less calls with a Content-Type and no body, and
 * the vendor's examples send card months and years as strings.
 */
describe('HTTP as real clients send it', () => {
  const emu = sharedEmulator();

  it('a trailing slash on a collection route is the same route', async () => {
    const name = unique('slash');
    const created = await emu().call('POST', '/applications/', {
      body: { name, type: 'private', permissions: ['token:read'] },
    });
    expect(created.status, created.text).toBe(201);
    const listed = await emu().call('GET', '/applications/?size=100');
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data.map((app: { name: string }) => app.name)).toContain(name);
    const one = await emu().call('GET', `/applications/${created.body.id}/`);
    expect(one.status, one.text).toBe(200);
    expect(one.body.id).toBe(created.body.id);
    // Two slashes are still no route: only one trailing slash is dropped.
    expect((await emu().call('GET', '/applications//')).status).not.toBe(200);
  });

  it('a proxy call keeps its trailing slash: the path is the caller’s', async () => {
    const slashed = await emu().call('POST', '/proxy/', { raw: '', headers: { 'svc-proxy-key': 'none' } });
    // The proxy route answered (its own 404 for an unknown key, as a proxy_error), not "No route".
    expect(slashed.status).toBe(404);
    expect(slashed.body.proxy_error.detail).toBe('No proxy has this key.');
  });

  it.each([
    ['application/json', '0'],
    ['application/x-www-form-urlencoded', '0'],
    ['text/plain', undefined],
  ])('regenerate, transactions, commit, rollback and DELETE take an empty body sent as %s', async (type, length) => {
    const headers = { 'content-type': type, ...(length !== undefined && { 'content-length': length }) };
    const app = await createApplication(emu(), { name: unique('empty'), type: 'private', permissions: ['token:read'] });
    const regenerated = await emu().call('POST', `/applications/${app.id}/regenerate`, { raw: '', headers });
    expect(regenerated.status, regenerated.text).toBe(200);
    expect(regenerated.body.key).toEqual(expect.any(String));

    for (const end of ['commit', 'rollback']) {
      const opened = await emu().call('POST', '/transactions', { key: emu().privateKey, raw: '', headers });
      expect(opened.status, opened.text).toBe(201);
      const ended = await emu().call('POST', `/transactions/${opened.body.id}/${end}`, {
        key: emu().privateKey,
        raw: '',
        headers,
      });
      expect(ended.status, ended.text).toBeLessThan(300);
    }

    const deleted = await emu().call('DELETE', `/applications/${app.id}`, { raw: '', headers });
    expect(deleted.status, deleted.text).toBe(204);
  });

  it('a chunked empty body is empty too; a body-less route still refuses a body it cannot read', async () => {
    const app = await createApplication(emu(), {
      name: unique('chunked'),
      type: 'private',
      permissions: ['token:read'],
    });
    const chunked = await fetch(`${emu().url}/applications/${app.id}/regenerate`, {
      method: 'POST',
      headers: { 'svc-api-key': emu().managementKey, 'content-type': 'text/plain' },
      // A stream has no length: fetch sends it chunked.
      body: new ReadableStream({ start: (controller) => controller.close() }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status, await chunked.clone().text()).toBe(200);
    const text = await emu().call('POST', `/applications/${app.id}/regenerate`, {
      raw: 'hello',
      contentType: 'text/plain',
    });
    expect(text.status).toBe(415);
  });

  it('keeps the spec where it speaks: a body route still needs its body', async () => {
    const empty = await emu().call('POST', '/applications/', { raw: '', contentType: 'application/json' });
    expect(empty.status).toBe(400);
    const reactor = await emu().call('POST', '/reactors', {
      body: { name: unique('r'), code: 'module.exports = async () => ({ raw: {} });' },
    });
    expect(reactor.status).toBe(400);
    expect(reactor.body.errors).toHaveProperty('configuration');
  });

  it('takes card months and years sent as strings of digits as the numbers they are', async () => {
    const year = String(new Date().getUTCFullYear() + 3);
    const created = await emu().call('POST', '/tokens', {
      key: emu().privateKey,
      body: { type: 'card', data: { number: '4242424242424242', expiration_month: '06', expiration_year: year } },
    });
    expect(created.status, created.text).toBe(201);
    const read = await emu().call('GET', `/tokens/${created.body.id}`, { key: emu().privateKey });
    expect(read.body.data).toMatchObject({ expiration_month: 6, expiration_year: Number(year) });

    const bad = await emu().call('POST', '/tokens', {
      key: emu().privateKey,
      body: { type: 'card', data: { number: '4242424242424242', expiration_month: 'June', expiration_year: year } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toHaveProperty(['data.expiration_month']);
  });
});
