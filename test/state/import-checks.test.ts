/**
 * What an import may not do to a tenant, found by trying: lock its own caller out, or hold what a
 * create would have refused (two Applications on one key, a proxy to a file: URL, a card token
 * whose data is no card). Each is refused whole: nothing changes.
 */
import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';

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
});
