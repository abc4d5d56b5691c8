/**
 * Attacks on the explanations of refusals: what a caller who holds no key of a tenant
 * can learn from them, and what the store and the hypothetical route take.
 */
import { describe, expect, it } from 'vitest';
import type { Explanation } from '../../src/api/explanation.js';
import { explainAccess } from '../../src/emulator/services/access.js';
import { EXPLANATION_WEIGHT_LIMIT, ExplanationStore } from '../../src/emulator/services/explanations.js';
import { createTenant, startEmulator } from '../helpers/emulator.js';
import { startReceiver } from '../helpers/receiver.js';

describe('explanations to a caller of an anonymous proxy', () => {
  it("never carry the bound Application's name, id or rules; the tenant reads them by trace id", async () => {
    const emu = await startEmulator({ inMemory: true });
    const receiver = await startReceiver(() => 200);
    const b = await createTenant(emu, 'bee');
    const bound = await emu.call('POST', '/applications', {
      key: b.management_key,
      body: {
        name: 'B-SECRET-APP',
        type: 'private',
        permissions: ['token:create'],
        rules: [
          { priority: 1, container: '/bsecret/', transform: 'mask', permissions: ['token:use'], description: 'B-RULE' },
        ],
      },
    });
    expect(bound.status, bound.text).toBe(201);
    const token = await emu.call('POST', '/tokens', {
      key: b.private_key,
      body: { type: 'token', data: 'B-VALUE', containers: ['/bsecret/'] },
    });
    expect(token.status, token.text).toBe(201);
    const proxy = await emu.call('POST', '/proxies', {
      key: b.management_key,
      body: { name: 'anon', destination_url: receiver.url, require_auth: false, application: { id: bound.body.id } },
    });
    expect(proxy.status, proxy.text).toBe(201);
    const a = await emu.call('POST', '/applications', {
      body: { name: 'a', type: 'private', permissions: ['token:use'] },
    });

    for (const key of [null, a.body.key as string]) {
      const traceId = `anon-${key === null ? 'none' : 'a'}`;
      const refused = await emu.call('POST', '/proxy', {
        key,
        headers: { 'svc-proxy-key': proxy.body.key, 'svc-trace-id': traceId },
        body: { card: `{{ ${token.body.id} }}`, bad: '{{ not a token }}' },
      });
      expect(refused.status, refused.text).toBe(403);
      const explanation = refused.body.proxy_error.explanation;
      expect(explanation, refused.text).toBeDefined();
      for (const secret of ['B-SECRET-APP', bound.body.id, 'B-RULE', '/bsecret/', 'B-VALUE']) {
        expect(refused.text).not.toContain(secret);
      }
      expect(explanation.application).toBeNull();
      // What became of each expression is still said: a malformed one, a refused token.
      expect(explanation.expressions.map((e: { outcome: string }) => e.outcome).sort()).toEqual([
        'denied',
        'malformed',
      ]);
      // The proxy's tenant reads the whole decision by the trace id.
      const kept = await emu.call('GET', `/_emulator/explanations/${traceId}`, { key: b.management_key });
      expect(kept.status, kept.text).toBe(200);
      expect(kept.body.explanation.application.name).toBe('B-SECRET-APP');
      expect(kept.body.explanation.rules[0].description).toBe('B-RULE');
    }
  });

  it('a bound Application without token:use is refused without its rules', async () => {
    const emu = await startEmulator({ inMemory: true });
    const receiver = await startReceiver(() => 200);
    const bound = await emu.call('POST', '/applications', {
      body: {
        name: 'BOUND-NAME',
        type: 'private',
        permissions: ['token:create'],
        rules: [
          { priority: 1, container: '/x/', transform: 'reveal', permissions: ['token:read'], description: 'DESC' },
        ],
      },
    });
    const proxy = await emu.call('POST', '/proxies', {
      body: { name: 'anon', destination_url: receiver.url, require_auth: false, application: { id: bound.body.id } },
    });
    const token = await emu.call('POST', '/tokens', {
      key: emu.privateKey,
      body: { type: 'token', data: 'V', containers: ['/x/'] },
    });
    const refused = await emu.call('POST', '/proxy', {
      key: null,
      headers: { 'svc-proxy-key': proxy.body.key },
      body: { v: `{{ ${token.body.id} }}` },
    });
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.proxy_error.explanation.decision).toBe('denied');
    for (const secret of ['BOUND-NAME', bound.body.id, 'DESC', '/x/']) expect(refused.text).not.toContain(secret);
  });
});

describe('the explanation store is bounded by what it holds, not only by count', () => {
  // An Application of 100 rules (the most one may have): each refusal explains every rule.
  const grantee = {
    id: 'a',
    name: 'n',
    type: 'private',
    permissions: [] as string[],
    rules: Array.from({ length: 100 }, (_, i) => ({
      priority: i,
      container: `/c${i}/`,
      transform: 'mask' as const,
      permissions: Array.from({ length: 100 }, () => 'token:read'),
      description: 'd'.repeat(1000),
    })),
  };
  // Built once: the store weighs an explanation by its rules, and keeps it as it is (the same one
  // recorded 51,200 times weighs what 51,200 built apart would).
  const heavy: Explanation = explainAccess(grantee, 'token:use', ['/z/'], 't');
  const request = (i: number) => ({ traceId: `id-${i}`, method: 'GET', path: '/', status: 403 });

  it('one tenant refused 1,000 times with 100 rules each holds a bounded weight, the newest kept', () => {
    const store = new ExplanationStore();
    for (let i = 0; i < 1000; i++) store.record('t', request(i), heavy);
    expect(store.weight).toBeLessThanOrEqual(EXPLANATION_WEIGHT_LIMIT / 10);
    expect(store.get('t', 'id-999')?.explanation.rules).toHaveLength(100);
    expect(store.get('t', 'id-0')).toBeUndefined();
  });

  it('many tenants together stay under the limit; the latest refusal is kept', () => {
    const store = new ExplanationStore();
    for (let t = 0; t < 256; t++) for (let i = 0; i < 200; i++) store.record(`t${t}`, request(i), heavy);
    expect(store.weight).toBeLessThanOrEqual(EXPLANATION_WEIGHT_LIMIT);
    expect(store.get('t255', 'id-199')).toBeDefined();
  });
});
