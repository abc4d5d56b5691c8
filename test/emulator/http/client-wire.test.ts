import { describe, expect, it } from 'vitest';
import { createApplication, sharedEmulator, unique } from '../../helpers/emulator.js';
import { type RawResponse, rawConnection, rawRequest } from '../../helpers/raw-http.js';

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

describe('the leniency attacked', () => {
  const emu = sharedEmulator();

  async function raw(requestLine: string, headers: string[], body = ''): Promise<RawResponse> {
    const connection = await rawConnection(emu().url);
    connection.send(rawRequest(emu().url, requestLine, [...headers, 'connection: close'], body));
    const answer = await connection.next();
    if (answer === 'closed') throw new Error(`${requestLine}: closed without an answer`);
    return answer;
  }

  it('a trailing slash reaches the admin guard and the key check of the route it names', async () => {
    const fromAfar = await raw('GET /_emulator/tenants/ HTTP/1.1', ['origin: http://evil.example']);
    expect(fromAfar.status, fromAfar.body).toBe(403);
    const noKey = await raw('GET /applications/ HTTP/1.1', []);
    expect(noKey.status, noKey.body).toBe(401);
    // Two slashes: the trailing one dropped, an empty id the schema refuses.
    const twice = await raw('GET /applications// HTTP/1.1', [`svc-api-key: ${emu().managementKey}`]);
    expect(twice.status, twice.body).toBe(400);
    const encoded = await raw('GET /applications/%2F HTTP/1.1', [`svc-api-key: ${emu().managementKey}`]);
    expect([400, 404], encoded.body).toContain(encoded.status);
  });

  it('an empty chunked body with trailers, and bytes after Content-Length: 0, are read as HTTP has them', async () => {
    const app = await createApplication(emu(), { name: unique('wire'), type: 'private', permissions: ['token:read'] });
    const key = `svc-api-key: ${emu().managementKey}`;
    const trailers = await raw(
      `POST /applications/${app.id}/regenerate HTTP/1.1`,
      [key, 'content-type: text/plain', 'transfer-encoding: chunked', 'trailer: x-late'],
      '0\r\nx-late: 1\r\n\r\n',
    );
    expect(trailers.status, trailers.body).toBe(200);
    // Bytes after an empty body are the connection's next request: here not one, so a 400 after the 200.
    const connection = await rawConnection(emu().url);
    connection.send(
      rawRequest(
        emu().url,
        `POST /applications/${app.id}/regenerate HTTP/1.1`,
        [key, 'content-length: 0', 'content-type: text/plain'],
        'hello',
      ),
    );
    const first = await connection.next();
    expect(first !== 'closed' && first.status).toBe(200);
    const odd = await raw(
      `DELETE /applications/${app.id} HTTP/1.1`,
      [key, 'content-type: application/x-www-form-urlencoded', 'content-length: 3'],
      'a=b',
    );
    expect(odd.status, odd.body).toBe(415);
    const still = await emu().call('GET', `/applications/${app.id}`);
    expect(still.status, still.text).toBe(200);
  });
});
