import { describe, expect, it } from 'vitest';
import { childPids } from '../../testing/helpers.js';
import { createTenant, sharedEmulator, unique } from '../../helpers/emulator.js';

const emu = sharedEmulator();

/** A tenant of its own for one test, with a reactor, a proxy and an Application beyond the starters. */
async function template() {
  const tenant = await createTenant(emu(), unique('template'));
  const as = { key: tenant.management_key };
  const reactor = await emu().call('POST', '/reactors', {
    ...as,
    body: { name: 'echo', code: 'module.exports = async (req) => ({ raw: { args: req.args } });', configuration: {} },
  });
  expect(reactor.status, reactor.text).toBe(201);
  const proxy = await emu().call('POST', '/proxies', {
    ...as,
    body: { name: 'outbound', destination_url: 'http://127.0.0.1:9/', require_auth: false },
  });
  expect(proxy.status, proxy.text).toBe(201);
  const app = await emu().call('POST', '/applications', {
    ...as,
    body: { name: 'reader', type: 'private', permissions: ['token:read'] },
  });
  expect(app.status, app.text).toBe(201);
  return { ...tenant, reactorId: reactor.body.id as string };
}

const fork = (tenantId: string, key: string | null, body: unknown = { name: 'test' }, headers = {}) =>
  emu().call('POST', `/_emulator/tenants/${tenantId}/forks`, { key, body, headers });

describe('POST /_emulator/tenants/{tenant_id}/forks', () => {
  it("answers 201 with the fork's id and a new key for every Application it copied, by name", async () => {
    const tmpl = await template();
    const forked = await fork(tmpl.id, tmpl.management_key);
    expect(forked.status, forked.text).toBe(201);
    const body = forked.body;
    expect(body).toMatchObject({ name: 'test', id: expect.any(String), created_at: expect.any(String) });
    expect(body.id).not.toBe(tmpl.id);
    expect(body.applications.map((app: { name: string }) => app.name).sort()).toEqual(
      ['reader', 'svc management', 'svc private'].sort(),
    );
    expect(body.reactors.map((reactor: { name: string }) => reactor.name)).toEqual(['echo']);
    expect(body.proxies.map((proxy: { name: string }) => proxy.name)).toEqual(['outbound']);
    // New keys, each the fork's own: the template's keys are not the fork's.
    expect(body.management_key).not.toBe(tmpl.management_key);
    const self = await emu().call('GET', '/applications/key', { key: body.management_key });
    expect(self.body).toMatchObject({ tenant_id: body.id, type: 'management' });
    const reader = body.applications.find((app: { name: string }) => app.name === 'reader');
    const token = await emu().call('POST', '/tokens', { key: body.private_key, body: { type: 'token', data: 'x' } });
    expect((await emu().call('GET', `/tokens/${token.body.id}`, { key: reader.key })).status).toBe(200);
    // No body names the fork "fork".
    expect((await fork(tmpl.id, tmpl.management_key, null)).body.name).toBe('fork');
  });

  it("refuses another tenant's key, a key that is not a management one, a bad id and a bad body", async () => {
    const tmpl = await template();
    const other = await createTenant(emu(), unique('other'));
    const theirs = await fork(tmpl.id, other.management_key);
    expect(theirs.status).toBe(403);
    expect(theirs.headers['content-type']).toMatch(/problem\+json/);
    expect(theirs.body.detail).toMatch(/another tenant's/);
    const priv = await fork(tmpl.id, tmpl.private_key);
    expect(priv.status).toBe(403);
    expect(priv.body.detail).toMatch(/private one/);
    const none = await fork(tmpl.id, null);
    expect(none.status).toBe(401);
    const unknown = '00000000-0000-4000-8000-000000000000';
    const missing = await fork(unknown, tmpl.management_key);
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toMatch(/problem\+json/);
    expect(missing.body.detail).toBe(`No tenant ${unknown}.`);
    // An id that is no UUID is refused as the platform's other ids are: a field error naming it.
    const malformed = await fork('not-a-tenant', tmpl.management_key);
    expect(malformed.status).toBe(400);
    expect(Object.keys(malformed.body.errors)).toContain('tenant_id');
    const extra = await fork(tmpl.id, tmpl.management_key, { name: 'x', keys: 1 });
    expect(extra.status).toBe(400);
    expect(Object.keys(extra.body.errors)).toContain('keys');
  });

  it('answers loopback callers for this machine only, as the other admin routes', async () => {
    const tmpl = await template();
    const name = unique('refused');
    const host = await fork(tmpl.id, tmpl.management_key, { name }, { host: 'evil.example' });
    expect(host.status).toBe(403);
    expect(host.body.detail).toMatch(/Host "evil.example"/);
    const origin = await fork(tmpl.id, tmpl.management_key, { name }, { origin: 'https://evil.example' });
    expect(origin.status).toBe(403);
    const listed = (await emu().call('GET', '/_emulator/tenants', { key: null })).body.data;
    expect(listed.filter((tenant: { name: string }) => tenant.name === name)).toEqual([]);
  });

  it('keeps the fork and its template apart: writes in one are not seen in the other', async () => {
    const tmpl = await template();
    const forked = (await fork(tmpl.id, tmpl.management_key)).body;
    const token = (key: string, data: string) => emu().call('POST', '/tokens', { key, body: { type: 'token', data } });
    const inTemplate = await token(tmpl.private_key, 'template secret');
    const inFork = await token(forked.private_key, 'fork secret');
    expect(inTemplate.status).toBe(201);
    expect(inFork.status).toBe(201);
    expect((await emu().call('GET', `/tokens/${inTemplate.body.id}`, { key: forked.private_key })).status).toBe(404);
    expect((await emu().call('GET', `/tokens/${inFork.body.id}`, { key: tmpl.private_key })).status).toBe(404);
    const renamed = await emu().call('PATCH', `/reactors/${forked.reactors[0].id}`, {
      key: forked.management_key,
      raw: JSON.stringify({ name: 'renamed' }),
      contentType: 'application/merge-patch+json',
    });
    expect(renamed.status, renamed.text).toBe(204);
    const templateReactors = (await emu().call('GET', '/reactors', { key: tmpl.management_key })).body.data;
    expect(templateReactors.map((reactor: { name: string }) => reactor.name)).toEqual(['echo']);
    const app = await emu().call('POST', '/applications', {
      key: tmpl.management_key,
      body: { name: 'late', type: 'private', permissions: ['token:read'] },
    });
    expect(app.status).toBe(201);
    const forkApps = (await emu().call('GET', '/applications', { key: forked.management_key })).body.data;
    expect(forkApps.map((each: { name: string }) => each.name)).not.toContain('late');
  });

  it("runs a fork's first reactor call in the template's sandbox process: no process is started", async () => {
    const tmpl = await template();
    const react = (key: string, reactorId: string) =>
      emu().call('POST', `/reactors/${reactorId}/react`, { key, body: { args: { n: 1 } } });
    const warm = await react(tmpl.private_key, tmpl.reactorId);
    expect(warm.status, warm.text).toBe(200);
    const before = childPids().sort();
    const forked = (await fork(tmpl.id, tmpl.management_key)).body;
    const first = await react(forked.private_key, forked.reactors[0].id);
    expect(first.status, first.text).toBe(200);
    expect(first.body.raw).toEqual({ args: { n: 1 } });
    expect(childPids().sort()).toEqual(before);
  });
});

describe('DELETE /_emulator/tenants/{tenant_id}', () => {
  it('deletes a fork and all it holds with its own management key; its keys open nothing after', async () => {
    const tmpl = await template();
    const forked = (await fork(tmpl.id, tmpl.management_key)).body;
    const token = await emu().call('POST', '/tokens', {
      key: forked.private_key,
      body: { type: 'token', data: 'gone' },
    });
    expect(token.status).toBe(201);
    const refused = await emu().call('DELETE', `/_emulator/tenants/${forked.id}`, { key: tmpl.management_key });
    expect(refused.status).toBe(403);
    const deleted = await emu().call('DELETE', `/_emulator/tenants/${forked.id}`, { key: forked.management_key });
    expect(deleted.status, deleted.text).toBe(204);
    expect((await emu().call('GET', '/applications/key', { key: forked.private_key })).status).toBe(401);
    const listed = (await emu().call('GET', '/_emulator/tenants', { key: null })).body.data;
    expect(listed.map((tenant: { id: string }) => tenant.id)).not.toContain(forked.id);
    // The template is untouched and still forks.
    expect((await emu().call('GET', '/reactors', { key: tmpl.management_key })).body.data).toHaveLength(1);
    expect((await fork(tmpl.id, tmpl.management_key)).status).toBe(201);
  });

  it("refuses the tenant svc serve bootstrapped, and an unknown tenant's id", async () => {
    const bootstrapped = await emu().call('DELETE', `/_emulator/tenants/${emu().tenantId}`);
    expect(bootstrapped.status).toBe(409);
    expect(bootstrapped.body.detail).toMatch(/bootstrapped/);
    expect((await emu().call('GET', '/applications/key')).status).toBe(200);
    const missing = await emu().call('DELETE', '/_emulator/tenants/00000000-0000-4000-8000-000000000000');
    expect(missing.status).toBe(404);
  });
});
