import { describe, expect, it } from 'vitest';
import type { EmulatorOptions } from '../../../src/emulator/index.js';
import {
  createTenant,
  startEmulator,
  type CallOptions,
  type HttpResult,
  type TestEmulator,
} from '../../helpers/emulator.js';

const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2099 };
const HOUR = 60 * 60 * 1000;
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

/** A clock the test moves by hand. */
function manualClock(start = Date.parse('2030-01-01T00:00:00.000Z')) {
  let now = start;
  return {
    clock: () => new Date(now),
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** Calls made with the bootstrap private key (token:*), optionally inside a transaction. */
function client(emu: TestEmulator, key = emu.privateKey) {
  const call = <T = any>(method: string, path: string, options: CallOptions = {}): Promise<HttpResult<T>> =>
    emu.call<T>(method, path, { key, ...options });
  const inTx = (transaction: string, options: CallOptions = {}): CallOptions => ({
    ...options,
    headers: { ...options.headers, 'svc-transaction-id': transaction },
  });
  return {
    call,
    inTx,
    async begin(): Promise<string> {
      const created = await call('POST', '/transactions');
      expect(created.status).toBe(201);
      return created.body.id as string;
    },
    async createToken(
      body: Record<string, unknown>,
      transaction?: string,
    ): Promise<{ id: string } & Record<string, unknown>> {
      const created = await call('POST', '/tokens', transaction ? inTx(transaction, { body }) : { body });
      expect(created.status, created.text).toBe(201);
      return created.body;
    },
    async listedIds(transaction?: string): Promise<string[]> {
      const listed = await call('GET', '/tokens?size=100', transaction ? inTx(transaction) : {});
      expect(listed.status, listed.text).toBe(200);
      return (listed.body.data as { id: string }[]).map((token) => token.id);
    },
    async status(transaction: string): Promise<string> {
      return (await call('GET', `/transactions/${transaction}`)).body.status as string;
    },
  };
}

async function setup(options: EmulatorOptions & { dir?: string } = {}) {
  const emu = await startEmulator({ inMemory: true, ...options });
  return { emu, ...client(emu) };
}

function expectProblem(result: HttpResult, status: number, detail?: RegExp): void {
  expect(result.status, result.text).toBe(status);
  expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(result.body.status).toBe(status);
  if (detail) expect(result.body.detail).toMatch(detail);
}

describe('POST /transactions and GET /transactions/{id}', () => {
  it('opens a transaction for one hour by default and reports it', async () => {
    const { emu, call } = await setup();
    const created = await call('POST', '/transactions');
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(['created_at', 'created_by', 'expires_at', 'id', 'status']);
    expect(created.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(created.body.status).toBe('open');
    expect(Date.parse(created.body.expires_at) - Date.parse(created.body.created_at)).toBe(HOUR);
    expect(Math.abs(Date.parse(created.body.created_at) - Date.now())).toBeLessThan(10_000);

    // created_by is the bootstrap private Application, the owner of the key used.
    const apps = await emu.call('GET', '/applications');
    const privateApp = (apps.body.data as { id: string; name: string }[]).find((app) => app.name === 'svc private');
    expect(created.body.created_by).toBe(privateApp!.id);

    const got = await call('GET', `/transactions/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);
    // Ids are UUIDs: the upper-case spelling names the same transaction.
    const upper = await call('GET', `/transactions/${created.body.id.toUpperCase()}`);
    expect(upper.status).toBe(200);
    expect(upper.body.id).toBe(created.body.id);
  });

  it('takes its lifetime from transactionTtlMs', async () => {
    const { call } = await setup({ transactionTtlMs: 90_000 });
    const created = await call('POST', '/transactions');
    expect(Date.parse(created.body.expires_at) - Date.parse(created.body.created_at)).toBe(90_000);
  });

  it('needs a key, and any valid key will do (a management key too)', async () => {
    const { emu } = await setup();
    const anonymous = await emu.call('POST', '/transactions', { key: null });
    expectProblem(anonymous, 401);
    const byManagement = await emu.call('POST', '/transactions', { key: emu.managementKey });
    expect(byManagement.status).toBe(201);
    expect(byManagement.body.status).toBe('open');
  });

  it('answers 404 for an unknown id and 400 for a malformed one', async () => {
    const { call } = await setup();
    for (const [method, path] of [
      ['GET', `/transactions/${UNKNOWN}`],
      ['POST', `/transactions/${UNKNOWN}/commit`],
      ['POST', `/transactions/${UNKNOWN}/rollback`],
    ] as const) {
      expectProblem(await call(method, path), 404, new RegExp(UNKNOWN));
    }
    for (const [method, path] of [
      ['GET', '/transactions/nope'],
      ['POST', '/transactions/nope/commit'],
      ['POST', '/transactions/nope/rollback'],
    ] as const) {
      const result = await call(method, path);
      expectProblem(result, 400);
      expect(Object.keys(result.body.errors ?? {}), path).toContain('id');
    }
  });
});

describe('staged token writes', () => {
  it('stages POST /tokens: invisible outside, visible inside, applied by commit', async () => {
    const { call, inTx, begin, createToken, listedIds, status } = await setup();
    const tx = await begin();
    const staged = await createToken({ type: 'card', data: CARD, metadata: { order: '42' } }, tx);
    expect(staged).toMatchObject({ type: 'card', containers: ['/pci/high/'], metadata: { order: '42' } });
    expect(staged.data).toEqual({ number: 'XXXXXXXXXXXX4242', expiration_month: 12, expiration_year: 2099 });

    // Outside: not there.
    expectProblem(await call('GET', `/tokens/${staged.id}`), 404, new RegExp(staged.id));
    expect(await listedIds()).not.toContain(staged.id);
    // Inside: there, the same as created.
    const inside = await call('GET', `/tokens/${staged.id}`, inTx(tx));
    expect(inside.status).toBe(200);
    expect(inside.body).toEqual(staged);
    expect(await listedIds(tx)).toEqual([staged.id]);

    const committed = await call('POST', `/transactions/${tx}/commit`);
    expect(committed.status).toBe(200);
    expect(committed.text).toBe('');
    expect(await status(tx)).toBe('committed');

    const outside = await call('GET', `/tokens/${staged.id}`);
    expect(outside.status).toBe(200);
    expect(outside.body).toEqual(staged);
    expect(await listedIds()).toEqual([staged.id]);
  });

  it('stages DELETE /tokens/{id}: the token stays readable outside until commit', async () => {
    const { call, inTx, begin, createToken, listedIds } = await setup();
    const token = await createToken({ type: 'token', data: 'secret', id: 'keep-me' });
    const other = await createToken({ type: 'token', data: 'other' });
    const tx = await begin();

    const deleted = await call('DELETE', `/tokens/${token.id}`, inTx(tx));
    expect(deleted.status).toBe(204);
    expect((await call('GET', `/tokens/${token.id}`)).status).toBe(200);
    expect(await listedIds()).toEqual([token.id, other.id]);
    expectProblem(await call('GET', `/tokens/${token.id}`, inTx(tx)), 404);
    expect(await listedIds(tx)).toEqual([other.id]);
    // Deleting it again inside the transaction: it is already gone there.
    expectProblem(await call('DELETE', `/tokens/${token.id}`, inTx(tx)), 404);

    expect((await call('POST', `/transactions/${tx}/commit`)).status).toBe(200);
    expectProblem(await call('GET', `/tokens/${token.id}`), 404);
    expect(await listedIds()).toEqual([other.id]);
  });

  it('stages POST /tokenize: every token of the value appears at commit, none before', async () => {
    const { call, inTx, begin, listedIds } = await setup();
    const tx = await begin();
    const tokenized = await call(
      'POST',
      '/tokenize',
      inTx(tx, { body: { name: 'Jane', tags: ['a', 7], card: { type: 'card', data: CARD } } }),
    );
    expect(tokenized.status, tokenized.text).toBe(201);
    const { name, tags, card } = tokenized.body as { name: string; tags: string[]; card: { id: string; type: string } };
    expect(card.type).toBe('card');
    const ids = [name, ...tags, card.id];
    expect(new Set(ids).size).toBe(4);

    for (const id of ids) {
      expect((await call('GET', `/tokens/${id}`)).status, id).toBe(404);
      expect((await call('GET', `/tokens/${id}`, inTx(tx))).status, id).toBe(200);
    }
    expect(await listedIds()).toEqual([]);
    expect((await listedIds(tx)).sort()).toEqual([...ids].sort());

    expect((await call('POST', `/transactions/${tx}/commit`)).status).toBe(200);
    expect((await listedIds()).sort()).toEqual([...ids].sort());
    // The values went in as they were given.
    const detokenized = await call('POST', '/detokenize', { body: { name: `{{ ${name} }}`, n: `{{ ${tags[1]} }}` } });
    expect(detokenized.body).toEqual({ name: 'Jane', n: 7 });
  });

  it('keeps every write of concurrent requests in one transaction', async () => {
    const { call, begin, createToken, listedIds } = await setup();
    const tx = await begin();
    const created = await Promise.all(
      Array.from({ length: 12 }, (_, i) => createToken({ type: 'token', data: `v${i}` }, tx)),
    );
    expect((await listedIds(tx)).sort()).toEqual(created.map((token) => token.id).sort());
    expect((await call('POST', `/transactions/${tx}/commit`)).status).toBe(200);
    expect((await listedIds()).sort()).toEqual(created.map((token) => token.id).sort());
  });

  it('a transaction sees only its own staged writes, not another open one', async () => {
    const { call, inTx, begin, createToken, listedIds } = await setup();
    const a = await begin();
    const b = await begin();
    const inA = await createToken({ type: 'token', data: 'a' }, a);
    const inB = await createToken({ type: 'token', data: 'b' }, b);
    expect(await listedIds(a)).toEqual([inA.id]);
    expect(await listedIds(b)).toEqual([inB.id]);
    expect((await call('GET', `/tokens/${inB.id}`, inTx(a))).status).toBe(404);
    // Read-committed: once A commits, B sees A's token.
    expect((await call('POST', `/transactions/${a}/commit`)).status).toBe(200);
    expect((await listedIds(b)).sort()).toEqual([inA.id, inB.id].sort());
  });

  it('refuses a custom id that already exists, inside or outside the transaction', async () => {
    const { call, inTx, begin, createToken } = await setup();
    await createToken({ type: 'token', data: 'x', id: 'taken' });
    const tx = await begin();
    await createToken({ type: 'token', data: 'y', id: 'staged-one' }, tx);
    for (const id of ['taken', 'staged-one']) {
      const result = await call('POST', '/tokens', inTx(tx, { body: { type: 'token', data: 'z', id } }));
      expectProblem(result, 400);
      expect(result.body.errors.id, id).toEqual([`a token with id ${id} already exists`]);
    }
  });

  it('rollback discards every staged write', async () => {
    const { call, inTx, begin, createToken, listedIds, status } = await setup();
    const existing = await createToken({ type: 'token', data: 'stays' });
    const tx = await begin();
    const staged = await createToken({ type: 'token', data: 'goes' }, tx);
    expect((await call('DELETE', `/tokens/${existing.id}`, inTx(tx))).status).toBe(204);
    const tokenized = await call('POST', '/tokenize', inTx(tx, { body: ['one', 'two'] }));
    expect(tokenized.status).toBe(201);

    const rolledBack = await call('POST', `/transactions/${tx}/rollback`);
    expect(rolledBack.status).toBe(200);
    expect(rolledBack.text).toBe('');
    expect(await status(tx)).toBe('rolled_back');
    expect(await listedIds()).toEqual([existing.id]);
    for (const id of [staged.id, ...(tokenized.body as string[])])
      expect((await call('GET', `/tokens/${id}`)).status).toBe(404);
    expect((await call('GET', `/tokens/${existing.id}`)).status).toBe(200);
  });

  it('a commit with nothing staged is fine', async () => {
    const { call, begin, status } = await setup();
    const tx = await begin();
    expect((await call('POST', `/transactions/${tx}/commit`)).status).toBe(200);
    expect(await status(tx)).toBe('committed');
  });
});

describe('transactions that are not open', () => {
  it('answer 409 to commit and rollback once committed or rolled back', async () => {
    const { call, begin } = await setup();
    const committed = await begin();
    expect((await call('POST', `/transactions/${committed}/commit`)).status).toBe(200);
    const rolledBack = await begin();
    expect((await call('POST', `/transactions/${rolledBack}/rollback`)).status).toBe(200);

    for (const verb of ['commit', 'rollback']) {
      expectProblem(await call('POST', `/transactions/${committed}/${verb}`), 409, /is committed, not open/);
      expectProblem(await call('POST', `/transactions/${rolledBack}/${verb}`), 409, /is rolled back, not open/);
    }
    // The status did not change.
    expect((await call('GET', `/transactions/${committed}`)).body.status).toBe('committed');
    expect((await call('GET', `/transactions/${rolledBack}`)).body.status).toBe('rolled_back');
  });

  it('refuse token writes naming a committed transaction (409), and nothing is written', async () => {
    const { call, inTx, begin, createToken, listedIds } = await setup();
    const existing = await createToken({ type: 'token', data: 'x' });
    const tx = await begin();
    expect((await call('POST', `/transactions/${tx}/commit`)).status).toBe(200);

    expectProblem(
      await call('POST', '/tokens', inTx(tx, { body: { type: 'token', data: 'late' } })),
      409,
      new RegExp(tx),
    );
    expectProblem(await call('DELETE', `/tokens/${existing.id}`, inTx(tx)), 409);
    expectProblem(await call('POST', '/tokenize', inTx(tx, { body: { a: 'late' } })), 409);
    // Reads inside it are refused too rather than silently reading outside.
    expectProblem(await call('GET', `/tokens/${existing.id}`, inTx(tx)), 409);
    expect(await listedIds()).toEqual([existing.id]);
  });

  it('a token write naming an unknown transaction is a 404 and writes nothing', async () => {
    const { call, inTx, listedIds } = await setup();
    expectProblem(
      await call('POST', '/tokens', inTx(UNKNOWN, { body: { type: 'token', data: 'x' } })),
      404,
      new RegExp(UNKNOWN),
    );
    expect(await listedIds()).toEqual([]);
  });

  it('a commit whose staged custom-id token was created outside meanwhile is a 409 and applies nothing', async () => {
    const { call, begin, createToken, status } = await setup();
    const tx = await begin();
    const other = await createToken({ type: 'token', data: 'staged other' }, tx);
    await createToken({ type: 'token', data: 'staged', id: 'order-1' }, tx);
    await createToken({ type: 'token', data: 'outside', id: 'order-1' });

    expectProblem(await call('POST', `/transactions/${tx}/commit`), 409, /order-1/);
    // Nothing of the transaction was applied; the outside token is untouched; it can still be rolled back.
    expect((await call('GET', `/tokens/${other.id}`)).status).toBe(404);
    const detokenized = await call('POST', '/detokenize', { body: '{{ order-1 }}' });
    expect(detokenized.body).toBe('outside');
    expect(await status(tx)).toBe('open');
    expect((await call('POST', `/transactions/${tx}/rollback`)).status).toBe(200);
  });

  it('two transactions staging the same custom id: the second commit is a 409', async () => {
    const { call, begin, createToken } = await setup();
    const a = await begin();
    const b = await begin();
    await createToken({ type: 'token', data: 'from a', id: 'shared' }, a);
    await createToken({ type: 'token', data: 'from b', id: 'shared' }, b);
    expect((await call('POST', `/transactions/${a}/commit`)).status).toBe(200);
    expectProblem(await call('POST', `/transactions/${b}/commit`), 409, /shared/);
    expect((await call('POST', '/detokenize', { body: '{{ shared }}' })).body).toBe('from a');
  });
});

describe('commit edge cases', () => {
  // src/emulator/services/transactions.ts commit(): the "created outside meanwhile" check looks
  // at the committed store only, so a token the transaction itself deleted counts as a conflict.
  it('a transaction that deletes a token and re-creates its custom id commits', async () => {
    const { call, inTx, begin, createToken } = await setup();
    await createToken({ type: 'token', data: 'old', id: 'reused' });
    const tx = await begin();
    expect((await call('DELETE', '/tokens/reused', inTx(tx))).status).toBe(204);
    await createToken({ type: 'token', data: 'new', id: 'reused' }, tx);
    expect((await call('POST', '/detokenize', inTx(tx, { body: '{{ reused }}' }))).body).toBe('new');
    expect((await call('POST', `/transactions/${tx}/commit`)).status).toBe(200); // actual: 409
    expect((await call('POST', '/detokenize', { body: '{{ reused }}' })).body).toBe('new');
  });

  // commit()'s conflict check uses store.tokens.get, which still holds expired tokens until the
  // 30 s sweep; staging the id was allowed (visible() skips expired tokens).
  it('a staged custom id that only an expired token held commits', async () => {
    const { clock, advance } = manualClock();
    const { call, begin, createToken } = await setup({ clock });
    await createToken({ type: 'token', data: 'short-lived', id: 'ephemeral', expires_at: '2030-01-01T00:00:30.000Z' });
    advance(60_000);
    expect((await call('GET', '/tokens/ephemeral')).status).toBe(404);
    const tx = await begin();
    await createToken({ type: 'token', data: 'fresh', id: 'ephemeral' }, tx);
    expect((await call('POST', `/transactions/${tx}/commit`)).status).toBe(200); // actual: 409
    expect((await call('POST', '/detokenize', { body: '{{ ephemeral }}' })).body).toBe('fresh');
  });

  // commit() snapshots the record, awaits the token writes, then stores {...snapshot, staged: []}:
  // a write staged while those writes reach the disk is answered 201 and then silently dropped.
  it('a token write acknowledged while a commit is in progress is not lost', async () => {
    const emu = await startEmulator();
    const { call, inTx, begin, status } = client(emu);
    const tx = await begin();
    expect(
      (await call('POST', '/tokenize', inTx(tx, { body: Array.from({ length: 300 }, (_, i) => `pre-${i}`) }))).status,
    ).toBe(201);
    let committing = true;
    const commit = call('POST', `/transactions/${tx}/commit`).finally(() => (committing = false));
    // Writes one after another for as long as the commit runs: some land while it writes to disk.
    const writes: HttpResult[] = [];
    while (committing)
      writes.push(await call('POST', '/tokens', inTx(tx, { body: { type: 'token', data: `late-${writes.length}` } })));
    expect((await commit).status).toBe(200);
    for (const write of writes) expect([201, 409]).toContain(write.status);
    const acknowledged = writes.filter((write) => write.status === 201).map((write) => write.body.id as string);
    expect(await status(tx)).toBe('committed');
    for (const id of acknowledged) expect((await call('GET', `/tokens/${id}`)).status, id).toBe(200); // actual: 404
  });
});

describe('expiry', () => {
  it('expires at expires_at: status expired, staged writes never appear, commit and writes answer 409', async () => {
    const { clock, advance } = manualClock();
    const { call, inTx, begin, createToken, listedIds, status } = await setup({ clock, transactionTtlMs: 60_000 });
    const tx = await begin();
    const created = (await call('GET', `/transactions/${tx}`)).body;
    expect(created.created_at).toBe('2030-01-01T00:00:00.000Z');
    expect(created.expires_at).toBe('2030-01-01T00:01:00.000Z');
    const staged = await createToken({ type: 'token', data: 'x' }, tx);

    advance(59_999);
    expect(await status(tx)).toBe('open');
    advance(1);
    expect(await status(tx)).toBe('expired');

    expectProblem(await call('POST', `/transactions/${tx}/commit`), 409, /expired/);
    expectProblem(await call('POST', `/transactions/${tx}/rollback`), 409, /expired/);
    expectProblem(await call('POST', '/tokens', inTx(tx, { body: { type: 'token', data: 'late' } })), 409, /expired/);
    expectProblem(await call('POST', '/tokenize', inTx(tx, { body: ['late'] })), 409);
    expect((await call('GET', `/tokens/${staged.id}`)).status).toBe(404);
    expect(await listedIds()).toEqual([]);

    // Later still, it stays expired and its writes stay discarded.
    advance(HOUR);
    expect(await status(tx)).toBe('expired');
    expect((await call('GET', `/tokens/${staged.id}`)).status).toBe(404);
  });
});

describe('persistence', () => {
  it('staged writes survive a restart and are applied by a commit after it', async () => {
    const first = await startEmulator();
    const api = client(first);
    const existing = await api.createToken({ type: 'token', data: 'old', id: 'old-one' });
    const tx = await api.begin();
    const staged = await api.createToken({ type: 'card', data: CARD }, tx);
    expect((await api.call('DELETE', `/tokens/${existing.id}`, api.inTx(tx))).status).toBe(204);
    await first.dispose();

    const second = await startEmulator({ dir: first.dir });
    const again = client(second, first.privateKey);
    expect(await again.status(tx)).toBe('open');
    expect(await again.listedIds()).toEqual([existing.id]);
    expect(await again.listedIds(tx)).toEqual([staged.id]);
    expect((await again.call('POST', `/transactions/${tx}/commit`)).status).toBe(200);
    expect(await again.listedIds()).toEqual([staged.id]);
    // The card's data came through the restart sealed and intact.
    const detokenized = await again.call('POST', '/detokenize', { body: { card: `{{ ${staged.id} }}` } });
    expect(detokenized.body).toEqual({ card: CARD });
  });

  it('a transaction that expired while the emulator was down is expired after the restart, its writes gone', async () => {
    const time = manualClock();
    const first = await startEmulator({ clock: time.clock, transactionTtlMs: 60_000 });
    const api = client(first);
    const tx = await api.begin();
    const staged = await api.createToken({ type: 'token', data: 'x' }, tx);
    await first.dispose();

    time.advance(2 * 60_000);
    const second = await startEmulator({ dir: first.dir, clock: time.clock, transactionTtlMs: 60_000 });
    const again = client(second, first.privateKey);
    expect(await again.status(tx)).toBe('expired');
    expectProblem(await again.call('POST', `/transactions/${tx}/commit`), 409);
    expect((await again.call('GET', `/tokens/${staged.id}`)).status).toBe(404);
    expect(await again.listedIds()).toEqual([]);
  });
});

describe('tenant isolation', () => {
  it('another tenant cannot see, commit, roll back or write into this transaction', async () => {
    const { emu, call, begin, createToken, listedIds, status } = await setup();
    const other = client(emu, (await createTenant(emu)).private_key);
    const tx = await begin();
    const staged = await createToken({ type: 'token', data: 'mine' }, tx);
    const mine = await createToken({ type: 'token', data: 'committed' });

    expectProblem(await other.call('GET', `/transactions/${tx}`), 404);
    expectProblem(await other.call('POST', `/transactions/${tx}/commit`), 404);
    expectProblem(await other.call('POST', `/transactions/${tx}/rollback`), 404);
    expectProblem(
      await other.call('POST', '/tokens', other.inTx(tx, { body: { type: 'token', data: 'theirs' } })),
      404,
    );
    expectProblem(await other.call('POST', '/tokenize', other.inTx(tx, { body: ['theirs'] })), 404);
    expectProblem(await other.call('DELETE', `/tokens/${mine.id}`, other.inTx(tx)), 404);
    expectProblem(await other.call('GET', `/tokens/${staged.id}`, other.inTx(tx)), 404);

    // Untouched: still open, still holding exactly our one staged write.
    expect(await status(tx)).toBe('open');
    expect((await listedIds(tx)).sort()).toEqual([staged.id, mine.id].sort());
    expect((await call('POST', `/transactions/${tx}/commit`)).status).toBe(200);
    expect((await listedIds()).sort()).toEqual([staged.id, mine.id].sort());
    expect(await other.listedIds()).toEqual([]);
  });
});

describe('standard tier', () => {
  it('answers 403 naming the Enterprise tier to every transaction feature', async () => {
    const { call, inTx } = await setup({ tier: 'standard' });
    const attempts: [string, string, CallOptions][] = [
      ['POST', '/transactions', {}],
      ['GET', `/transactions/${UNKNOWN}`, {}],
      ['POST', `/transactions/${UNKNOWN}/commit`, {}],
      ['POST', `/transactions/${UNKNOWN}/rollback`, {}],
      ['POST', '/tokens', inTx(UNKNOWN, { body: { type: 'token', data: 'x' } })],
      ['POST', '/tokenize', inTx(UNKNOWN, { body: ['x'] })],
      ['DELETE', '/tokens/some-token', inTx(UNKNOWN)],
    ];
    for (const [method, path, options] of attempts) {
      const result = await call(method, path, options);
      expect(result.status, `${method} ${path}`).toBe(403);
      expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(result.body.detail, `${method} ${path}`).toMatch(/Enterprise[- ]tier/);
    }
  });

  it('token writes without the header still work', async () => {
    const { call, createToken, listedIds } = await setup({ tier: 'standard' });
    const token = await createToken({ type: 'token', data: 'plain' });
    const tokenized = await call('POST', '/tokenize', { body: ['a'] });
    expect(tokenized.status).toBe(201);
    expect((await listedIds()).sort()).toEqual([token.id, ...(tokenized.body as string[])].sort());
    expect((await call('DELETE', `/tokens/${token.id}`)).status).toBe(204);
    expect(await listedIds()).toEqual(tokenized.body);
  });
});
