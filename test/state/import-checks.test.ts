/**
 * What an import may not do to a tenant, found by trying: lock its own caller out, or hold what a
 * create would have refused (two Applications on one key, a proxy to a file: URL, a card token
 * whose data is no card). Each is refused whole: nothing changes.
 */
import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { createTenant, startEmulator, type TestEmulator } from '../helpers/emulator.js';

const T = '2026-01-01T00:00:00.000Z';
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const hash = (key: string) => createHash('sha256').update(key).digest('hex');
const doc = (over: Record<string, unknown>) => ({
  svc_state: 1,
  applications: [],
  reactors: [],
  proxies: [],
  tokens: [],
  ...over,
});
const app = (n: number, keyHash: string) => ({
  id: id(n),
  name: `app ${n}`,
  type: 'private',
  permissions: ['token:read'],
  rules: [],
  expires_at: null,
  key_hash: keyHash,
  created_at: T,
});
const proxy = (n: number, key: string, url = 'http://127.0.0.1:9/') => ({
  id: id(n),
  name: `proxy ${n}`,
  destination_url: url,
  request_transform: null,
  response_transform: null,
  application_id: null,
  require_auth: false,
  key,
  configuration: null,
  created_at: T,
});
const token = (over: Record<string, unknown>) => ({
  id: 'tok-1',
  type: 'token',
  containers: ['/general/'],
  metadata: {},
  expires_at: null,
  created_at: T,
  data: 'v',
  ...over,
});

async function state(emu: TestEmulator) {
  const { body } = await emu.call('GET', '/_emulator/state');
  const { exported_at: _at, ...rest } = body;
  return rest;
}

async function refused(emu: TestEmulator, body: unknown, status: number, detail: RegExp) {
  const before = await state(emu);
  const answer = await emu.call('POST', '/_emulator/state', { body });
  expect(answer.status, answer.text).toBe(status);
  expect(answer.body.detail).toMatch(detail);
  expect(answer.body.detail).toMatch(/Nothing changed\.$/);
  expect(await state(emu)).toEqual(before);
}

describe('state import refuses what would lock out or what a create refuses', () => {
  test("a file that gives the caller's own Application (or a bootstrap one) another key, type or expiry", async () => {
    const emu = await startEmulator({ inMemory: true });
    const current = (await state(emu)).applications as { key_hash: string }[];
    const me = current.find((entry) => entry.key_hash === hash(emu.managementKey))!;
    const priv = current.find((entry) => entry.key_hash === hash(emu.privateKey))!;
    const lockout = /would lock it out/;
    await refused(emu, doc({ applications: [{ ...me, key_hash: hash('another') }] }), 409, lockout);
    await refused(emu, doc({ applications: [{ ...me, expires_at: '2026-12-01T00:00:00.000Z' }] }), 409, lockout);
    await refused(emu, doc({ applications: [{ ...priv, key_hash: hash('another') }] }), 409, lockout);
    await refused(
      emu,
      doc({ applications: [{ ...priv, type: 'public', permissions: ['token:create'], rules: [] }] }),
      409,
      lockout,
    );
    // The same key, type and expiry with another name and grants: that is an update, and the key still works.
    const renamed = await emu.call('POST', '/_emulator/state', {
      body: doc({ applications: [{ ...priv, name: 'renamed', permissions: ['token:read'] }] }),
    });
    expect(renamed.status, renamed.text).toBe(200);
    expect((await emu.call('GET', '/tokens', { key: emu.privateKey })).status).toBe(200);
    expect((await emu.call('GET', '/applications')).status).toBe(200);
  });

  test('two Applications of the file on one key, or two proxies on one key', async () => {
    const emu = await startEmulator({ inMemory: true });
    await refused(emu, doc({ applications: [app(1, hash('k')), app(2, hash('k'))] }), 422, /same key/);
    await refused(emu, doc({ proxies: [proxy(3, 'pk'), proxy(4, 'pk')] }), 422, /same key/);
  });

  test('entries a create refuses: a proxy to a file: URL, a bad token id, container or data, an empty name', async () => {
    const emu = await startEmulator({ inMemory: true });
    await refused(emu, doc({ proxies: [proxy(3, 'pk', 'file:///etc/passwd')] }), 422, /proxy 3: destination_url/);
    await refused(emu, doc({ proxies: [proxy(3, 'pk', 'http://')] }), 422, /proxy 3: destination_url/);
    await refused(emu, doc({ proxies: [{ ...proxy(3, 'pk'), key: '' }] }), 422, /proxy 3: key/);
    await refused(emu, doc({ tokens: [token({ id: 'a/b c' })] }), 422, /token a\/b c: id must be/);
    await refused(emu, doc({ tokens: [token({ containers: ['nope'] })] }), 422, /token tok-1: containers\[0\]/);
    await refused(emu, doc({ tokens: [token({ containers: [] })] }), 422, /token tok-1: containers/);
    await refused(emu, doc({ tokens: [token({ type: 'card', data: 'x' })] }), 422, /token tok-1: data/);
    const badCard = { number: '4242424242424241', expiration_month: 12, expiration_year: 2035 };
    await refused(emu, doc({ tokens: [token({ type: 'card', data: badCard })] }), 422, /data\.number/);
    await refused(emu, doc({ applications: [{ ...app(1, hash('k')), name: '' }] }), 422, /name/);
    await refused(
      emu,
      doc({ reactors: [{ id: id(5), name: 'r', code: '', application_id: null, configuration: {}, created_at: T }] }),
      422,
      /reactor r: code/,
    );
    // A card that expired after it was exported is still a card: it imports.
    const expired = { number: '4242424242424242', expiration_month: 1, expiration_year: 2020 };
    const answer = await emu.call('POST', '/_emulator/state', {
      body: doc({ tokens: [token({ type: 'card', data: expired, containers: ['/pci/'] })] }),
    });
    expect(answer.status, answer.text).toBe(200);
  });

  test("a key already held in another tenant is refused without naming that tenant's Application or proxy", async () => {
    const emu = await startEmulator({ inMemory: true });
    const made = await emu.call('POST', '/proxies', {
      body: { name: 'theirs', destination_url: 'http://127.0.0.1:9/', require_auth: false },
    });
    expect(made.status, made.text).toBe(201);
    const apps = (await state(emu)).applications as { id: string; key_hash: string }[];
    const theirApp = apps.find((entry) => entry.key_hash === hash(emu.privateKey))!;
    const other = await createTenant(emu);
    const attempts = [
      doc({ applications: [app(1, hash(emu.privateKey))] }),
      doc({ proxies: [proxy(3, made.body.key)] }),
    ];
    for (const body of attempts) {
      const answer = await emu.call('POST', '/_emulator/state', { key: other.management_key, body });
      expect(answer.status, answer.text).toBe(409);
      expect(answer.body.detail).toMatch(/another tenant/);
      expect(answer.text).not.toContain(theirApp.id);
      expect(answer.text).not.toContain(made.body.id);
    }
  });
});
