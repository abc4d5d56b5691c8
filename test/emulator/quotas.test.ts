import { describe, expect, it } from 'vitest';
import { TRANSACTION_HEADER } from '../../src/api/headers.js';
import { PROBLEM_TYPES } from '../../src/api/problem.js';
import { createEmulator, EmulatorError } from '../../src/emulator/index.js';
import {
  createTenant,
  type HttpResult,
  sharedEmulator,
  startEmulator,
  unique,
  type TestEmulator,
} from '../helpers/emulator.js';
import { startReceiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/wait.js';

const KB = 1024;
/** A token's data: 100 KB of text (a tenant of 1 MB holds about ten). */
const DATA = 'x'.repeat(100 * KB);

type Usage = Record<string, { used: number; quota: number }>;

async function usage(emu: TestEmulator, key: string): Promise<Usage> {
  const answer = await emu.call<Usage>('GET', '/_emulator/quotas', { key });
  expect(answer.status, answer.text).toBe(200);
  return answer.body;
}

/** Creates tokens of DATA with `key` until one is refused; returns the ids made and the refusal. */
async function fillTokens(emu: TestEmulator, key: string, most = 100) {
  const ids: string[] = [];
  for (let i = 0; i < most; i++) {
    const made = await emu.call('POST', '/tokens', { key, body: { type: 'token', data: DATA } });
    if (made.status !== 201) return { ids, refusal: made };
    ids.push(made.body.id as string);
  }
  throw new Error(`${most} tokens of 100 KB were all kept`);
}

describe('per-tenant quotas', () => {
  const shared = sharedEmulator({
    inMemory: true,
    tier: 'enterprise',
    quotas: { tokens: '1MB', transactions: '1MB', results: '1MB', tenant: '2MB', total: '1GB' },
    webhooks: { attempts: 1, retryBaseMs: 50, attemptTimeoutMs: 500 },
  });

  it('tokens past the tenant quota answer 507 naming it; other tenants are still served', async () => {
    const emu = shared();
    const mine = await createTenant(emu, unique('full'));
    const other = await createTenant(emu, unique('other'));
    const { ids, refusal } = await fillTokens(emu, mine.private_key);
    // Each weighs its data sealed (base64: 4/3 of it) and its fields: seven fit in 1 MB.
    expect(ids.length).toBe(7);
    expect(refusal.status).toBe(507);
    expect(refusal.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refusal.body.type).toBe(PROBLEM_TYPES.quotaExceeded);
    expect(refusal.body.title).toBe('Insufficient storage');
    expect(refusal.body.detail).toMatch(
      /^The tenant's token storage is full: \d{3}\.\d KB of 1 MB \(quota tokens\)\. Delete tokens, or raise it with svc serve --quota tokens=2MB \(createEmulator: quotas\.tokens\)\.$/,
    );
    // A tokenize of many is one write: refused whole.
    const batch = await emu.call('POST', '/tokenize', {
      key: mine.private_key,
      body: [DATA, DATA].map((data) => ({ type: 'token', data })),
    });
    expect(batch.status, batch.text).toBe(507);
    // The other tenant, and the full tenant's reads, are served as before.
    const theirs = await emu.call('POST', '/tokens', { key: other.private_key, body: { type: 'token', data: DATA } });
    expect(theirs.status, theirs.text).toBe(201);
    const read = await emu.call('GET', `/tokens/${ids[0]}`, { key: mine.private_key });
    expect(read.status, read.text).toBe(200);

    const full = await usage(emu, mine.management_key);
    expect(full.tokens!.quota).toBe(1024 * KB);
    expect(full.tokens!.used).toBeGreaterThan(ids.length * 100 * KB);
    expect(full.tokens!.used).toBeLessThanOrEqual(1024 * KB);
    expect(full.tenant!.used).toBeGreaterThanOrEqual(full.tokens!.used);
    // The other tenant holds one token: its data sealed, 4/3 of 100 KB, and its fields.
    expect((await usage(emu, other.management_key)).tokens!.used).toBeLessThan(140 * KB);

    // A delete gives its room back: the next token is kept.
    expect((await emu.call('DELETE', `/tokens/${ids[0]}`, { key: mine.private_key })).status).toBe(204);
    expect((await usage(emu, mine.management_key)).tokens!.used).toBeLessThan(full.tokens!.used - 100 * KB);
    const again = await emu.call('POST', '/tokens', { key: mine.private_key, body: { type: 'token', data: DATA } });
    expect(again.status, again.text).toBe(201);
  });

  it('an expired token is swept and its room released', async () => {
    const emu = shared();
    const mine = await createTenant(emu, unique('expiry'));
    const clock = emu.emulator.tenants.clock(mine.id);
    const expiresAt = new Date(Date.now() + 60_000).toISOString();
    const made = await emu.call('POST', '/tokens', {
      key: mine.private_key,
      body: { type: 'token', data: DATA, expires_at: expiresAt },
    });
    expect(made.status, made.text).toBe(201);
    expect((await usage(emu, mine.management_key)).tokens!.used).toBeGreaterThan(100 * KB);
    await clock.advance(120_000);
    await eventually(async () => expect((await usage(emu, mine.management_key)).tokens!.used).toBe(0));
  });

  it("a transaction's staged writes count, and a rollback releases them", async () => {
    const emu = shared();
    const mine = await createTenant(emu, unique('staged'));
    const opened = await emu.call('POST', '/transactions', { key: mine.private_key });
    expect(opened.status, opened.text).toBe(201);
    const headers = { [TRANSACTION_HEADER]: opened.body.id as string };
    let refused: HttpResult | undefined;
    for (let i = 0; i < 20 && refused === undefined; i++) {
      const staged = await emu.call('POST', '/tokens', {
        key: mine.private_key,
        headers,
        body: { type: 'token', data: DATA },
      });
      if (staged.status !== 201) refused = staged;
    }
    expect(refused?.status).toBe(507);
    expect(refused?.body.detail).toMatch(/\(quota transactions\)\. Commit or roll back open transactions/);
    expect((await usage(emu, mine.management_key)).transactions!.used).toBeGreaterThan(900 * KB);
    const rolledBack = await emu.call('POST', `/transactions/${opened.body.id}/rollback`, { key: mine.private_key });
    expect(rolledBack.status, rolledBack.text).toBe(200);
    expect((await usage(emu, mine.management_key)).transactions!.used).toBeLessThan(KB);
  });

  it('async results past the quota end failed, the webhook saying why; the emulator serves on', async () => {
    const emu = shared();
    const mine = await createTenant(emu, unique('results'));
    const receiver = await startReceiver();
    const reactor = await emu.call('POST', '/reactors', {
      key: mine.management_key,
      body: {
        name: unique('big'),
        code: "module.exports = async (req) => ({ raw: { text: 'r'.repeat(req.args.size) } });",
        configuration: {},
      },
    });
    expect(reactor.status, reactor.text).toBe(201);
    const ids: string[] = [];
    // 12 results of 300 KB against a quota of 1 MB: without it all 3.6 MB would be kept.
    for (let i = 0; i < 12; i++) {
      const accepted = await emu.call('POST', `/reactors/${reactor.body.id}/react`, {
        key: mine.private_key,
        body: { args: { size: 300 * KB }, callback_url: receiver.url },
      });
      expect(accepted.status, accepted.text).toBe(202);
      ids.push(accepted.body.id as string);
    }
    const results = await Promise.all(
      ids.map((id) =>
        eventually(async () => {
          const result = await emu.call('GET', `/reactors/${reactor.body.id}/results/${id}`, { key: mine.private_key });
          expect(result.body.status).not.toBe('pending');
          expect(result.body.delivery.status).not.toBe('pending');
          return result.body;
        }, 15_000),
      ),
    );
    const kept = results.filter((result) => result.status === 'completed');
    const refused = results.filter((result) => result.status === 'failed');
    expect(kept.length).toBeGreaterThanOrEqual(2);
    expect(kept.length).toBeLessThanOrEqual(3);
    expect(refused.length).toBe(12 - kept.length);
    for (const result of refused) {
      expect(result.error.type).toBe(PROBLEM_TYPES.quotaExceeded);
      expect(result.error.detail).toMatch(/asynchronous results is full: .* \(quota results\)/);
    }
    // The webhook of a refused result says why.
    const hook = receiver.received.find((delivery) => JSON.parse(delivery.body).id === refused[0].id);
    expect(JSON.parse(hook!.body).error.type).toBe(PROBLEM_TYPES.quotaExceeded);
    const used = (await usage(emu, mine.management_key)).results!;
    // The quota, plus the small failures and delivery attempts kept whatever it says.
    expect(used.used).toBeLessThan(used.quota + 50 * KB);
    // The same tenant's synchronous calls are served.
    const sync = await emu.call('POST', `/reactors/${reactor.body.id}/react`, {
      key: mine.private_key,
      body: { args: { size: 10 } },
    });
    expect(sync.status, sync.text).toBe(200);
  });

  it('a state import past the quota is refused whole; a reset releases what the tenant held', async () => {
    const emu = shared();
    const source = await createTenant(emu, unique('source'));
    const target = await createTenant(emu, unique('target'));
    for (let i = 0; i < 5; i++) {
      const made = await emu.call('POST', '/tokens', { key: source.private_key, body: { type: 'token', data: DATA } });
      expect(made.status, made.text).toBe(201);
    }
    const exported = await emu.call('GET', '/_emulator/state', { key: source.management_key });
    expect(exported.status, exported.text).toBe(200);
    // The tokens only: the Applications' keys are the source's own.
    const tokens = { ...exported.body, applications: [] };
    for (let i = 0; i < 3; i++) {
      const made = await emu.call('POST', '/tokens', { key: target.private_key, body: { type: 'token', data: DATA } });
      expect(made.status, made.text).toBe(201);
    }
    const held = await usage(emu, target.management_key);
    // 3 tokens held and 5 imported are 8 of about 137 KB: past 1 MB.
    const imported = await emu.call('POST', '/_emulator/state', { key: target.management_key, body: tokens });
    expect(imported.status, imported.text).toBe(507);
    expect(imported.body.detail).toMatch(/\(quota tokens\)/);
    expect((await usage(emu, target.management_key)).tokens).toEqual(held.tokens);

    const reset = await emu.call('DELETE', '/_emulator/state', { key: target.management_key });
    expect(reset.status, reset.text).toBe(200);
    expect((await usage(emu, target.management_key)).tokens!.used).toBe(0);
    const again = await emu.call('POST', '/_emulator/state', { key: target.management_key, body: tokens });
    expect(again.status, again.text).toBe(200);
    const after = await usage(emu, target.management_key);
    // The same tokens, but for the fields an import sets of its own (who created them).
    const theirs = (await usage(emu, source.management_key)).tokens!.used;
    expect(after.tokens!.used).toBeGreaterThan(5 * 100 * KB);
    expect(Math.abs(after.tokens!.used - theirs)).toBeLessThan(KB);
  });

  it('the usage route is for management keys', async () => {
    const emu = shared();
    const answer = await emu.call('GET', '/_emulator/quotas', { key: emu.privateKey });
    expect(answer.status).toBe(403);
  });
});

describe('the total of all tenants', () => {
  it('refuses the tenant that would pass it, and a deleted tenant gives its room back', async () => {
    const emu = await startEmulator({ inMemory: true, quotas: { tenant: '1MB', total: '2MB' } });
    const tenants = [await createTenant(emu, 'a'), await createTenant(emu, 'b'), await createTenant(emu, 'c')];
    const filled = [];
    for (const tenant of tenants.slice(0, 2)) filled.push(await fillTokens(emu, tenant.private_key));
    // Each of the first two holds nearly its 1 MB (a refusal of its own quota, tenant)...
    for (const { refusal } of filled) expect(refusal.body.detail).toMatch(/\(quota tenant\)/);
    // ... and the third runs into the total of 2 MB first.
    const third = await fillTokens(emu, tenants[2]!.private_key);
    expect(third.refusal.status).toBe(507);
    expect(third.refusal.body.detail).toMatch(
      /^The emulator's storage \(all tenants together\) is full: [\d.]+ MB of 2 MB \(quota total\)\. Delete tenants or their tokens, or raise it with svc serve --quota total=4MB/,
    );
    expect(third.ids.length).toBeLessThan(filled[0]!.ids.length);
    const total = (await usage(emu, tenants[2]!.management_key)).total!;
    expect(total.quota).toBe(2048 * KB);
    expect(total.used).toBeLessThanOrEqual(2048 * KB);

    await emu.emulator.tenants.delete(tenants[0]!.id);
    expect((await usage(emu, tenants[2]!.management_key)).total!.used).toBeLessThan(total.used - 800 * KB);
    const after = await emu.call('POST', '/tokens', {
      key: tenants[2]!.private_key,
      body: { type: 'token', data: DATA },
    });
    expect(after.status, after.text).toBe(201);
  });
});

describe('writes at once', () => {
  it('saved together are counted together: no more are kept than the quota holds', async () => {
    // On disk, writes that arrive together are saved as one group (store/writer.ts).
    const emu = await startEmulator({ quotas: { tokens: '1MB' } });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        emu.call('POST', '/tokens', { key: emu.privateKey, body: { type: 'token', data: DATA } }),
      ),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array(7).fill(201), ...Array(13).fill(507)]);
    const used = (await usage(emu, emu.managementKey)).tokens!;
    expect(used.used).toBeLessThanOrEqual(used.quota);
  });
});

describe('a restart', () => {
  it('counts what the store holds, and a lower quota refuses new records but starts', async () => {
    const dir = await tempDir();
    const keys = { managementKey: 'quota-restart-management', privateKey: 'quota-restart-private' };
    const first = await startEmulator({ dir, ...keys, quotas: { tokens: '1MB' } });
    const { ids } = await fillTokens(first, first.privateKey);
    const before = await usage(first, first.managementKey);
    await first.dispose();

    const second = await startEmulator({ dir, ...keys, quotas: { tokens: '500KB' } });
    const after = await usage(second, second.managementKey);
    expect(after.tokens!.used).toBe(before.tokens!.used);
    expect(after.tokens!.quota).toBe(500 * KB);
    const refused = await second.call('POST', '/tokens', {
      key: second.privateKey,
      body: { type: 'token', data: 'small' },
    });
    expect(refused.status).toBe(507);
    expect(refused.body.detail).toMatch(/: \d{3}\.\d KB of 500 KB \(quota tokens\)/);
    // Deletes are never refused, and free the room they held.
    for (const id of ids.slice(0, 6)) {
      expect((await second.call('DELETE', `/tokens/${id}`, { key: second.privateKey })).status).toBe(204);
    }
    const small = await second.call('POST', '/tokens', {
      key: second.privateKey,
      body: { type: 'token', data: 'small' },
    });
    expect(small.status, small.text).toBe(201);
  });
});

describe('quota options', () => {
  it.each([
    [
      { tokens: 'lots' },
      'options.quotas.tokens must be a size above 0, like 512MB or 1GB (or a number of bytes), not "lots".',
    ],
    [{ tokens: 0 }, 'options.quotas.tokens must be a size above 0, like 512MB or 1GB (or a number of bytes), not 0.'],
    [
      { disk: '1GB' },
      'options.quotas.disk is not a quota: one of tokens, results, transactions, resources, tenant, total.',
    ],
  ])('%j is refused before anything starts', async (quotas, message) => {
    const emulator = createEmulator({ port: 0, inMemory: true, quotas: quotas as never });
    const failed = await emulator.ready.then(
      () => undefined,
      (error: unknown) => error,
    );
    await emulator.dispose();
    expect(failed).toBeInstanceOf(EmulatorError);
    expect((failed as EmulatorError).message).toBe(message);
  });
});
