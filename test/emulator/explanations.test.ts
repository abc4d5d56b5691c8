import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Explanation } from '../../src/api/explanation.js';
import { explainAccess } from '../../src/emulator/services/access.js';
import { ExplanationStore } from '../../src/emulator/services/explanations.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';

const SECRET = 'four-two-four-two-SECRET-VALUE';
const MASK = 'XXXX-MASKED';

async function app(
  emu: TestEmulator,
  grants: Record<string, unknown>,
): Promise<{ id: string; key: string; name: string }> {
  const created = await emu.call('POST', '/applications', {
    body: { name: `app-${randomBytes(4).toString('hex')}`, type: 'private', ...grants },
  });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

const rule = (priority: number, container: string, transform: string, permissions: string[]) => ({
  priority,
  container,
  transform,
  permissions,
});

async function token(emu: TestEmulator, key: string, containers: string[], mask?: string): Promise<string> {
  const created = await emu.call('POST', '/tokens', {
    key,
    body: { type: 'token', data: SECRET, containers, ...(mask !== undefined && { mask }) },
  });
  expect(created.status, created.text).toBe(201);
  return created.body.id;
}

function noSecret(value: unknown): void {
  const text = JSON.stringify(value);
  expect(text).not.toContain(SECRET);
  expect(text).not.toContain(MASK);
}

describe('explainAccess (pure)', () => {
  const grantee = {
    id: 'a1',
    name: 'shop',
    type: 'private',
    permissions: ['token:read'],
    rules: [
      { priority: 2, container: '/pci/', transform: 'mask' as const, permissions: ['token:read'] },
      { priority: 1, container: '/pci/high/', transform: 'reveal' as const, permissions: ['token:use'] },
    ],
  };

  it('lists rules in priority order with each criterion, and the rule that decided', () => {
    const e = explainAccess(grantee, 'token:use', ['/pci/high/cards/'], 't1');
    expect(e.decision).toBe('granted');
    expect(e.rules!.map((r) => r.priority)).toEqual([1, 2]);
    expect(e.rules![0]!.criteria).toEqual({ container: true, conditions: null, permission: true });
    expect(e.rules![1]!.criteria).toEqual({ container: true, conditions: null, permission: false });
    expect(e.decided_by).toEqual({ rule: 0 });
    expect(e.transform).toBe('reveal');
    expect(e.token).toEqual({ id: 't1', containers: ['/pci/high/cards/'] });
    expect(e.permission).toEqual({ name: 'token:use', held_plainly: false, held_by_rules: [0] });
  });

  it('priority decides: the first covering rule refuses though a later one would grant', () => {
    const e = explainAccess(grantee, 'token:use', ['/pci/low/']);
    expect(e.decision).toBe('denied');
    expect(e.decided_by).toEqual({ rule: 1 });
    expect(e.nearest_miss).toEqual({ rule: 1, failed: 'permission' });
    expect(e.reason).toContain('does not grant token:use');
  });

  it('no covering rule: the plain permissions decide, or the nearest miss is named', () => {
    const plain = explainAccess(grantee, 'token:read', ['/pii/']);
    expect(plain.decision).toBe('granted');
    expect(plain.decided_by).toEqual({ plain_permissions: true });
    expect(plain.transform).toBe('mask');
    const miss = explainAccess(grantee, 'token:use', ['/pii/']);
    expect(miss.decision).toBe('denied');
    expect(miss.decided_by).toBeNull();
    expect(miss.nearest_miss).toEqual({ rule: 0, failed: 'container' });
  });

  it('without a token: held anywhere, criteria.container null', () => {
    const e = explainAccess(grantee, 'token:delete');
    expect(e.decision).toBe('denied');
    expect(e.rules![0]!.criteria.container).toBeNull();
    expect(e.reason).toContain('neither plainly nor in any access rule');
  });
});

describe('ExplanationStore', () => {
  it('keeps the last 1,000 per tenant, the oldest dropped', () => {
    const store = new ExplanationStore();
    const e: Explanation = { decision: 'denied', reason: 'r', application: null };
    for (let i = 0; i < 1001; i++) store.record('t', { traceId: `id-${i}`, method: 'GET', path: '/', status: 403 }, e);
    expect(store.get('t', 'id-0')).toBeUndefined();
    expect(store.get('t', 'id-1000')?.status).toBe(403);
    expect(store.get('other', 'id-1000')).toBeUndefined();
  });
});

describe('explanations over HTTP', () => {
  it('401: no key and an unknown key, application null', async () => {
    const emu = await startEmulator({ inMemory: true });
    const none = await emu.call('GET', '/tokens', { key: null });
    expect(none.status).toBe(401);
    expect(none.body.explanation).toMatchObject({ decision: 'unauthenticated', application: null });
    expect(none.body.explanation.reason).toContain('no API key');
    const unknown = await emu.call('GET', '/tokens', { key: 'not-a-key-of-anyone' });
    expect(unknown.status).toBe(401);
    expect(unknown.body.explanation).toMatchObject({ decision: 'unauthenticated', application: null });
    await emu.dispose();
  });

  it('403 on a management route: the permission it needs, not held', async () => {
    const emu = await startEmulator({ inMemory: true });
    const denied = await emu.call('GET', '/applications', { key: emu.privateKey });
    expect(denied.status).toBe(403);
    const e: Explanation = denied.body.explanation;
    expect(e.decision).toBe('denied');
    expect(e.operation).toBe('application:read');
    expect(e.permission).toMatchObject({ name: 'application:read', held_plainly: false, held_by_rules: [] });
    expect(e.application?.type).toBe('private');
    await emu.dispose();
  });

  it('403 on a token: the rules, the deciding rule; stored by trace id, reason on the request event', async () => {
    const emu = await startEmulator({ inMemory: true });
    const writer = await app(emu, { rules: [rule(1, '/', 'reveal', ['token:create'])] });
    const reader = await app(emu, {
      rules: [rule(1, '/pci/', 'reveal', ['token:use']), rule(2, '/', 'mask', ['token:read'])],
    });
    const id = await token(emu, writer.key, ['/pii/'], MASK);
    const refused = await emu.call('POST', '/detokenize', {
      key: reader.key,
      body: { a: `{{ ${id} }}` },
      headers: { 'svc-trace-id': 'trace-h9-1' },
    });
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.detail).toContain('lacks token:use');
    const e: Explanation = refused.body.explanation;
    expect(e.decision).toBe('denied');
    expect(e.decided_by).toEqual({ rule: 1 });
    expect(e.rules![0]!.criteria.container).toBe(false);
    expect(e.expressions).toEqual([
      expect.objectContaining({ expression: `{{ ${id} }}`, token_id: id, container: '/pii/', outcome: 'denied' }),
    ]);
    noSecret(refused.body);

    const stored = await emu.call('GET', '/_emulator/explanations/trace-h9-1');
    expect(stored.status, stored.text).toBe(200);
    expect(stored.body).toMatchObject({ trace_id: 'trace-h9-1', method: 'POST', path: '/detokenize', status: 403 });
    expect(stored.body.explanation).toEqual(e);
    // Its own refusal, to the key that was refused; another Application's key sees nothing.
    expect((await emu.call('GET', '/_emulator/explanations/trace-h9-1', { key: reader.key })).status).toBe(200);
    expect((await emu.call('GET', '/_emulator/explanations/trace-h9-1', { key: writer.key })).status).toBe(404);
    expect((await emu.call('GET', '/_emulator/explanations/no-such-trace')).status).toBe(404);

    const deadline = Date.now() + 10_000;
    let event: any;
    while (!event && Date.now() < deadline) {
      event = emu.events.find((ev: any) => ev.type === 'request' && ev.traceId === 'trace-h9-1');
      if (!event) await new Promise((r) => setTimeout(r, 20));
    }
    expect(event.reason).toBe(e.reason);
    await emu.dispose();
  });

  it('detokenization: revealed, masked, redacted, not_found and malformed expressions, each as what it is', async () => {
    const emu = await startEmulator({ inMemory: true });
    const writer = await app(emu, { rules: [rule(1, '/', 'reveal', ['token:create'])] });
    const reader = await app(emu, {
      rules: [
        rule(1, '/open/', 'reveal', ['token:use']),
        rule(2, '/masked/', 'mask', ['token:use']),
        rule(3, '/hidden/', 'redact', ['token:use']),
      ],
    });
    const open = await token(emu, writer.key, ['/open/']);
    const masked = await token(emu, writer.key, ['/masked/'], MASK);
    const hidden = await token(emu, writer.key, ['/hidden/']);
    const body = { a: `{{ ${open} }}`, b: `{{${masked}}}`, c: `{{ ${hidden} }}`, d: '{{ not an id! }}' };
    const refused = await emu.call('POST', '/detokenize', { key: reader.key, body });
    expect(refused.status, refused.text).toBe(403);
    const e: Explanation = refused.body.explanation;
    expect(e.decision).toBe('denied');
    const outcomes = Object.fromEntries(e.expressions!.map((x) => [x.token_id ?? x.expression, x.outcome]));
    expect(outcomes).toEqual({
      [open]: 'revealed',
      [masked]: 'masked',
      [hidden]: 'redacted',
      '{{ not an id! }}': 'malformed',
    });
    expect(e.expressions!.find((x) => x.token_id === masked)!.transform).toBe('mask');
    noSecret(refused.body);

    const missing = await emu.call('POST', '/detokenize', {
      key: reader.key,
      body: { a: `{{ ${open} }}`, b: '{{ nope-123 }}' },
    });
    expect(missing.status, missing.text).toBe(400);
    expect(missing.body.detail).toBe('Token nope-123 in a detokenization expression does not exist.');
    expect(missing.body.explanation.decision).toBe('not_found');
    const byId = Object.fromEntries(missing.body.explanation.expressions.map((x: any) => [x.token_id, x.outcome]));
    expect(byId).toEqual({ [open]: 'revealed', 'nope-123': 'not_found' });
    noSecret(missing.body);
    await emu.dispose();
  });

  it('detokenization over its bound of tokens: a 400 explained as malformed, before any token is read', async () => {
    const emu = await startEmulator({ inMemory: true });
    const reader = await app(emu, { rules: [rule(1, '/', 'reveal', ['token:use'])] });
    const ids = Array.from({ length: 101 }, (_, i) => `tok-${String(i).padStart(4, '0')}`);
    const refused = await emu.call('POST', '/detokenize', {
      key: reader.key,
      body: { expression: ids.map((id) => `{{ ${id} }}`).join(' ') },
    });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.detail).toMatch(/^At most 100 tokens can be detokenized at once/);
    expect(refused.body.explanation).toMatchObject({
      decision: 'malformed',
      operation: 'token:use',
      application: { id: reader.id },
    });
    expect(refused.body.explanation.reason).toContain('At most 100 tokens');
    await emu.dispose();
  });

  it('POST /_emulator/explain: a hypothetical by application name, key, token or container', async () => {
    const emu = await startEmulator({ inMemory: true });
    const writer = await app(emu, { rules: [rule(1, '/', 'reveal', ['token:create'])] });
    const reader = await app(emu, { rules: [rule(1, '/pci/', 'mask', ['token:read'])] });
    const id = await token(emu, writer.key, ['/pci/high/']);
    const byName = await emu.call('POST', '/_emulator/explain', {
      body: { application: reader.name, token: id, permission: 'token:read' },
    });
    expect(byName.status, byName.text).toBe(200);
    expect(byName.body).toMatchObject({
      decision: 'granted',
      explanation: { transform: 'mask', decided_by: { rule: 0 } },
    });
    noSecret(byName.body);
    const byKey = await emu.call('POST', '/_emulator/explain', {
      body: { api_key: reader.key, container: '/pii/', permission: 'token:read' },
    });
    expect(byKey.body).toMatchObject({
      decision: 'denied',
      explanation: { nearest_miss: { rule: 0, failed: 'container' } },
    });
    const unknownKey = await emu.call('POST', '/_emulator/explain', {
      body: { api_key: 'nobody', permission: 'token:read' },
    });
    expect(unknownKey.body.decision).toBe('unauthenticated');
    const noToken = await emu.call('POST', '/_emulator/explain', {
      body: { application: reader.id, token: 'nope-1', permission: 'token:read' },
    });
    expect(noToken.body.decision).toBe('not_found');
    const both = await emu.call('POST', '/_emulator/explain', {
      body: { application: reader.id, api_key: 'x', permission: 'token:read' },
    });
    expect(both.status).toBe(400);
    const notManagement = await emu.call('POST', '/_emulator/explain', {
      key: reader.key,
      body: { application: reader.id, permission: 'token:read' },
    });
    expect(notManagement.status).toBe(403);
    expect(notManagement.body.explanation.decision).toBe('denied');
    await emu.dispose();
  });
});
