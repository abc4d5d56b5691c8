import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { wildcardMatcher } from '../../../src/emulator/services/pagination.js';
import { Runtime } from '../../../src/emulator/runtime/index.js';
import { startEmulator, type TestEmulator } from '../../helpers/emulator.js';

const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2099 };

async function app(emu: TestEmulator, body: Record<string, unknown>) {
  const created = await emu.call('POST', '/applications', {
    body: { name: `app-${Math.random()}`, type: 'private', ...body },
  });
  expect(created.status, created.text).toBe(201);
  return created.body as { id: string; key: string };
}

describe('wildcard names', () => {
  it('match in linear time: a pattern that would make a regex backtrack for minutes answers at once', () => {
    const matches = wildcardMatcher('a*a*a*a*a*a*a*a*b');
    expect(matches('a'.repeat(5000))).toBe(false);
    expect(matches(`${'a'.repeat(50)}b`)).toBe(true);
    expect(wildcardMatcher('Pay*Prod')('payments-prod')).toBe(true);
    expect(wildcardMatcher('*-prod')('payments-prod')).toBe(true);
    expect(wildcardMatcher('a*a')('a')).toBe(false);
  });
});

describe('a rule transform applies to token:use too', () => {
  it('a masked grant detokenizes to the mask, a redacted one is refused', async () => {
    const emu = await startEmulator({ inMemory: true });
    const card = (await emu.call('POST', '/tokens', { key: emu.privateKey, body: { type: 'card', data: CARD } })).body;
    const masked = await app(emu, {
      rules: [{ priority: 1, container: '/pci/', transform: 'mask', permissions: ['token:read', 'token:use'] }],
    });
    const seen = await emu.call('POST', '/detokenize', { key: masked.key, body: { n: `{{ ${card.id} }}` } });
    expect(seen.status).toBe(200);
    expect(seen.body.n.number).toBe('XXXXXXXXXXXX4242');
    expect(seen.text).not.toContain('4242424242424242');
    const redacted = await app(emu, {
      rules: [{ priority: 1, container: '/pci/', transform: 'redact', permissions: ['token:use'] }],
    });
    const refused = await emu.call('POST', '/detokenize', { key: redacted.key, body: { n: `{{ ${card.id} }}` } });
    expect(refused.status).toBe(403);
    expect(refused.text).not.toContain('4242');
  });
});

describe('proxies pointed at the emulator itself', () => {
  it('cannot borrow its loopback trust for the admin route, nor loop through /proxy', async () => {
    const emu = await startEmulator({ inMemory: true });
    const admin = (
      await emu.call('POST', '/proxies', {
        body: { name: 'admin', destination_url: `${emu.url}/_emulator`, require_auth: false },
      })
    ).body;
    const minted = await emu.call('POST', '/proxy/tenants', {
      key: null,
      headers: { 'svc-proxy-key': admin.key },
      raw: '{}',
      contentType: 'application/json',
    });
    expect(minted.status).toBe(403);
    expect(minted.text).not.toContain('management_key');
    const loop = (
      await emu.call('POST', '/proxies', {
        body: { name: 'loop', destination_url: `${emu.url}/proxy`, require_auth: false },
      })
    ).body;
    const looped = await emu.call('GET', `/proxy?svc-proxy-key=${loop.key}`, {
      key: null,
      headers: { 'svc-proxy-key': loop.key },
    });
    expect(looped.body.proxy_error?.status ?? looped.status).toBe(508);
  });
});

describe('the admin route and existing keys', () => {
  it('refuses a key that already belongs to an Application (409) instead of taking it over', async () => {
    const emu = await startEmulator({ inMemory: true });
    const taken = await emu.call('POST', '/_emulator/tenants', {
      key: null,
      body: { management_key: emu.managementKey },
    });
    expect(taken.status).toBe(409);
    expect((await emu.call('GET', '/applications/key')).body.tenant_id).toBe(emu.tenantId);
    const same = await emu.call('POST', '/_emulator/tenants', {
      key: null,
      body: { management_key: 'same-key-for-both-0001', private_key: 'same-key-for-both-0001' },
    });
    expect(same.status).toBe(400);
  });
});

describe('hostile nesting', () => {
  it('answers 400 rather than overflowing the stack', async () => {
    const emu = await startEmulator({ inMemory: true });
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    for (const route of ['/tokenize', '/detokenize']) {
      const result = await emu.call('POST', route, { key: emu.privateKey, raw: deep, contentType: 'application/json' });
      expect(result.status, route).toBe(400);
      expect(result.body.detail).toMatch(/nested deeper than 64 levels/);
    }
  });
});

describe('asynchronous results at rest', () => {
  it('keep what the reactor returned sealed in the store', async () => {
    const received: string[] = [];
    const receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        received.push(body);
        response.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
    const emu = await startEmulator();
    const card = (await emu.call('POST', '/tokens', { key: emu.privateKey, body: { type: 'card', data: CARD } })).body;
    const reactor = (
      await emu.call('POST', '/reactors', {
        body: { name: 'echo', configuration: {}, code: 'module.exports = async (req) => ({ raw: req.args });' },
      })
    ).body;
    const callback = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const pending = await emu.call('POST', `/reactors/${reactor.id}/react`, {
      key: emu.privateKey,
      body: { args: { card: `{{ ${card.id} }}` }, callback_url: callback },
    });
    expect(pending.status).toBe(202);
    for (let i = 0; i < 100 && received.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(received[0]).toContain('4242424242424242');
    const polled = await emu.call('GET', `/reactors/${reactor.id}/results/${pending.body.id}`, { key: emu.privateKey });
    expect(polled.body.raw.card.number).toBe('4242424242424242');
    await emu.dispose();
    const folder = path.join(emu.dir, '.svc', 'data', 'reactor-results');
    for (const name of await readdir(folder))
      expect(await readFile(path.join(folder, name), 'utf8')).not.toContain('4242424242424242');
  });
});

describe('npm specifiers', () => {
  it('cannot climb out of an allowlisted package with ..', async () => {
    const rt = new Runtime({ npmAllowlist: ['uuid'] });
    onTestFinished(() => rt.dispose());
    await expect(
      rt.load({
        id: 'x',
        version: 1,
        filename: 'x.js',
        code: "require('uuid/../ms');\nmodule.exports = async () => 1;",
      }),
    ).rejects.toThrow(/Cannot require "uuid\/\.\.\/ms"/);
  });
});
