import { randomBytes } from 'node:crypto';
import { readFile, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Page, Token } from '../../../src/api/types.js';
import { createTenant, startEmulator, type TestEmulator } from '../../helpers/emulator.js';

const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2099, cvc: '123' };
const CARD_MASK = { number: 'XXXXXXXXXXXX4242', expiration_month: 12, expiration_year: 2099 };
const BANK = { routing_number: '110000000', account_number: '000123456789' };
const BANK_MASK = { routing_number: '110000000', account_number: 'XXXXXXXX6789' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type Transform = 'reveal' | 'mask' | 'redact';
interface Rule {
  priority: number;
  container: string;
  transform: Transform;
  permissions: string[];
}

/** A private Application with these grants, created with the management key; returns its id and key. */
async function application(
  emu: TestEmulator,
  grants: { permissions?: string[]; rules?: Rule[] },
): Promise<{ id: string; key: string }> {
  const created = await emu.call('POST', '/applications', {
    body: { name: `app-${randomBytes(4).toString('hex')}`, type: 'private', ...grants },
  });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

/** Reads and uses everything, reveals on read. */
function revealer(emu: TestEmulator) {
  return application(emu, {
    rules: [
      {
        priority: 1,
        container: '/',
        transform: 'reveal',
        permissions: ['token:create', 'token:read', 'token:use', 'token:delete'],
      },
    ],
  });
}

async function createToken(emu: TestEmulator, key: string, body: Record<string, unknown>): Promise<Token> {
  const created = await emu.call<Token>('POST', '/tokens', { key, body });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

async function listIds(emu: TestEmulator, key: string, query = ''): Promise<string[]> {
  const listed = await emu.call<Page<Token>>('GET', `/tokens?size=100${query}`, { key });
  expect(listed.status, listed.text).toBe(200);
  return listed.body.data.map((token) => token.id);
}

/** `data` absent (redacted, or masked without a mask). */
const ABSENT = Symbol('absent');

function expectData(token: Token, expected: unknown, label: string): void {
  if (expected === ABSENT) expect(token, label).not.toHaveProperty('data');
  else expect(token.data, label).toEqual(expected);
}

describe('POST /tokens', () => {
  it('creates a token of each type in its default container and answers 201 with the token', async () => {
    const emu = await startEmulator({ inMemory: true });
    const app = await revealer(emu);
    const cases: [Record<string, unknown>, string, unknown][] = [
      [{ type: 'token', data: 'a string' }, '/general/high/', 'a string'],
      [{ type: 'token', data: 42.5 }, '/general/high/', 42.5],
      [{ type: 'token', data: 0 }, '/general/high/', 0],
      [{ type: 'token', data: false }, '/general/high/', false],
      [
        { type: 'token', data: { nested: { deep: [1, 'two', null] } } },
        '/general/high/',
        { nested: { deep: [1, 'two', null] } },
      ],
      [{ type: 'token', data: ['a', 1, { b: true }] }, '/general/high/', ['a', 1, { b: true }]],
      [{ type: 'card', data: { ...CARD, number: '4242 4242-4242 4242' } }, '/pci/high/', CARD],
      [{ type: 'bank', data: BANK }, '/bank/high/', BANK],
    ];
    for (const [body, container, data] of cases) {
      const created = await emu.call<Token>('POST', '/tokens', { key: app.key, body });
      const label = JSON.stringify(body);
      expect(created.status, label).toBe(201);
      expect(created.body, label).toMatchObject({
        type: body.type,
        containers: [container],
        metadata: {},
        tenant_id: emu.tenantId,
        created_by: app.id,
        expires_at: null,
      });
      expect(created.body.id, label).toMatch(UUID);
      expect(created.body, label).not.toHaveProperty('secret');
      expect(created.body.data, label).toEqual(data);
      const got = await emu.call<Token>('GET', `/tokens/${created.body.id}`, { key: app.key });
      expect(got.status, label).toBe(200);
      expect(got.body, label).toEqual(created.body);
    }
    expect(await listIds(emu, app.key)).toHaveLength(cases.length);
  });

  it('answers the created token as the caller may read it', async () => {
    const emu = await startEmulator({ inMemory: true });
    // The bootstrap private key reads with the implicit mask.
    expect((await createToken(emu, emu.privateKey, { type: 'card', data: CARD })).data).toEqual(CARD_MASK);
    // An Application that may create but not read gets no data back.
    const writer = await application(emu, { permissions: ['token:create'] });
    const created = await createToken(emu, writer.key, { type: 'card', data: CARD });
    expect(created).not.toHaveProperty('data');
    expect(created.created_by).toBe(writer.id);
  });

  it('lower-cases custom containers and keeps metadata', async () => {
    const emu = await startEmulator({ inMemory: true });
    const created = await createToken(emu, emu.privateKey, {
      type: 'token',
      data: 'x',
      containers: ['/Customers/EU/', '/general/high/', '/CUSTOMERS/eu/'],
      metadata: { customer: 'c-1', Note: 'Kept As Is' },
    });
    expect(created.containers).toEqual(['/customers/eu/', '/general/high/']);
    expect(created.metadata).toEqual({ customer: 'c-1', Note: 'Kept As Is' });
    const got = (await emu.call<Token>('GET', `/tokens/${created.id}`, { key: emu.privateKey })).body;
    expect(got.containers).toEqual(['/customers/eu/', '/general/high/']);
    expect(got.metadata).toEqual({ customer: 'c-1', Note: 'Kept As Is' });
  });

  it('takes a custom id and refuses a duplicate or malformed one', async () => {
    const emu = await startEmulator({ inMemory: true });
    const app = await revealer(emu);
    const created = await createToken(emu, app.key, { id: 'Order_42:card.v1-a', type: 'token', data: 'first' });
    expect(created.id).toBe('Order_42:card.v1-a');

    const duplicate = await emu.call('POST', '/tokens', {
      key: app.key,
      body: { id: 'Order_42:card.v1-a', type: 'token', data: 'second' },
    });
    expect(duplicate.status).toBe(400);
    expect(duplicate.body.errors.id[0]).toContain('already exists');
    expect((await emu.call<Token>('GET', '/tokens/Order_42:card.v1-a', { key: app.key })).body.data).toBe('first');

    for (const id of ['-starts-with-dash', 'has space', 'slash/inside', 'x'.repeat(201), '']) {
      const malformed = await emu.call('POST', '/tokens', { key: app.key, body: { id, type: 'token', data: 'x' } });
      expect(malformed.status, id).toBe(400);
      expect(Object.keys(malformed.body.errors), id).toEqual(['id']);
    }
    expect(await listIds(emu, app.key)).toEqual(['Order_42:card.v1-a']);
  });

  it('reveals a custom mask instead of the default one', async () => {
    const emu = await startEmulator({ inMemory: true });
    const card = await createToken(emu, emu.privateKey, { type: 'card', data: CARD, mask: { last4: '4242' } });
    expect(card.data).toEqual({ last4: '4242' });
    const text = await createToken(emu, emu.privateKey, {
      type: 'token',
      data: 'jane@example.com',
      mask: 'j***@example.com',
    });
    expect(text.data).toBe('j***@example.com');
    expect((await emu.call<Token>('GET', `/tokens/${text.id}`, { key: emu.privateKey })).body.data).toBe(
      'j***@example.com',
    );
  });

  it('expires a token at expires_at: it reads as 404 and leaves lists and detokenization', async () => {
    let now = Date.parse('2030-01-01T00:00:00Z');
    const emu = await startEmulator({ inMemory: true, clock: () => new Date(now) });
    const created = await createToken(emu, emu.privateKey, {
      type: 'token',
      data: 'short-lived',
      expires_at: '2030-01-01T01:00:05+01:00',
    });
    expect(created.expires_at).toBe('2030-01-01T00:00:05.000Z');
    const kept = await createToken(emu, emu.privateKey, { type: 'token', data: 'kept', expires_at: null });
    expect(kept.expires_at).toBeNull();
    expect((await emu.call('GET', `/tokens/${created.id}`, { key: emu.privateKey })).status).toBe(200);
    expect((await emu.call('POST', '/detokenize', { key: emu.privateKey, body: `{{ ${created.id} }}` })).body).toBe(
      'short-lived',
    );

    now += 5_000;
    expect((await emu.call('GET', `/tokens/${created.id}`, { key: emu.privateKey })).status).toBe(404);
    expect((await emu.call('DELETE', `/tokens/${created.id}`, { key: emu.privateKey })).status).toBe(404);
    expect(await listIds(emu, emu.privateKey)).toEqual([kept.id]);
    const detokenized = await emu.call('POST', '/detokenize', { key: emu.privateKey, body: `{{ ${created.id} }}` });
    expect(detokenized.status).toBe(400);
    expect(detokenized.body.detail).toContain(created.id);
  });

  it('refuses an expires_at that is not in the future', async () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    const emu = await startEmulator({ inMemory: true, clock: () => new Date(now) });
    for (const expiresAt of ['2029-12-31T23:59:59Z', '2030-01-01T00:00:00Z']) {
      const result = await emu.call('POST', '/tokens', {
        key: emu.privateKey,
        body: { type: 'token', data: 'x', expires_at: expiresAt },
      });
      expect(result.status, expiresAt).toBe(400);
      expect(result.body.errors.expires_at[0]).toContain('future');
    }
    expect(await listIds(emu, emu.privateKey)).toEqual([]);
  });
});

describe('POST /tokens validation', () => {
  const card = (data: Record<string, unknown>) => ({ type: 'card', data: { ...CARD, ...data } });
  const bank = (data: Record<string, unknown>) => ({ type: 'bank', data: { ...BANK, ...data } });
  const { cvc: _cvc, ...cardWithoutCvc } = CARD;
  const cases: [string, Record<string, unknown>, string][] = [
    ['missing type', { data: 'x' }, 'type'],
    ['unknown type', { type: 'ssn', data: 'x' }, 'type'],
    ['missing data', { type: 'token' }, 'data'],
    ['data null', { type: 'token', data: null }, 'data'],
    ['unknown field', { type: 'token', data: 'x', colour: 'red' }, 'colour'],
    ['card data not an object', { type: 'card', data: '4242424242424242' }, 'data'],
    ['card without number', { type: 'card', data: { expiration_month: 12, expiration_year: 2099 } }, 'data.number'],
    ['card number failing Luhn', card({ number: '4242424242424241' }), 'data.number'],
    ['card number with letters', card({ number: '4242abcd42424242' }), 'data.number'],
    ['card number too short', card({ number: '42424242' }), 'data.number'],
    ['card month 13', card({ expiration_month: 13 }), 'data.expiration_month'],
    // A string of digits is the number it spells ("06", client-wire.test.ts); a word is not.
    ['card month as a word', card({ expiration_month: 'June' }), 'data.expiration_month'],
    [
      'card without expiration_year',
      { type: 'card', data: { number: CARD.number, expiration_month: 1 } },
      'data.expiration_year',
    ],
    ['card year of two digits', card({ expiration_year: 99 }), 'data.expiration_year'],
    ['expired card', card({ expiration_month: 1, expiration_year: 2020 }), 'data.expiration_year'],
    ['cvc too short', card({ cvc: '12' }), 'data.cvc'],
    ['cvc as a number', card({ cvc: 123 }), 'data.cvc'],
    ['card unknown field', { type: 'card', data: { ...cardWithoutCvc, pin: '1234' } }, 'data.pin'],
    ['bank routing checksum', bank({ routing_number: '123456789' }), 'data.routing_number'],
    ['bank routing of 8 digits', bank({ routing_number: '11000000' }), 'data.routing_number'],
    ['bank account too short', bank({ account_number: '123' }), 'data.account_number'],
    ['bank account with letters', bank({ account_number: '12ab5678' }), 'data.account_number'],
    ['bank without account', { type: 'bank', data: { routing_number: BANK.routing_number } }, 'data.account_number'],
    ['container without slashes', { type: 'token', data: 'x', containers: ['general'] }, 'containers[0]'],
    [
      'container without trailing slash',
      { type: 'token', data: 'x', containers: ['/general/high/', '/pci'] },
      'containers[1]',
    ],
    ['container with a space', { type: 'token', data: 'x', containers: ['/my box/'] }, 'containers[0]'],
    ['no containers', { type: 'token', data: 'x', containers: [] }, 'containers'],
    ['metadata value not a string', { type: 'token', data: 'x', metadata: { ok: 'yes', count: 3 } }, 'metadata.count'],
    ['metadata not an object', { type: 'token', data: 'x', metadata: 'x' }, 'metadata'],
    ['expires_at not a date', { type: 'token', data: 'x', expires_at: 'tomorrow' }, 'expires_at'],
    ['mask null', { type: 'token', data: 'x', mask: null }, 'mask'],
  ];

  it.each(cases)('rejects %s', async (_label, body, field) => {
    const emu = await startEmulator({ inMemory: true });
    const result = await emu.call('POST', '/tokens', { key: emu.privateKey, body });
    expect(result.status).toBe(400);
    expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(result.body).toMatchObject({ status: 400, title: 'Validation failed', type: 'urn:svc:problem:validation' });
    expect(Object.keys(result.body.errors)).toEqual([field]);
    expect(result.body.detail).toContain(field);
    expect(await listIds(emu, emu.privateKey)).toEqual([]);
  });

  it('reports every card problem at once', async () => {
    const emu = await startEmulator({ inMemory: true });
    const result = await emu.call('POST', '/tokens', {
      key: emu.privateKey,
      body: { type: 'card', data: { number: '1234', expiration_month: 0, expiration_year: 2099, cvc: 'abc' } },
    });
    expect(result.status).toBe(400);
    expect(Object.keys(result.body.errors).sort()).toEqual(['data.cvc', 'data.expiration_month', 'data.number']);
  });
});

describe('token transforms', () => {
  /** Tokens of every shape, and what each transform shows of them. */
  async function seed(emu: TestEmulator) {
    const key = emu.privateKey;
    return {
      card: await createToken(emu, key, { type: 'card', data: CARD }),
      cardCustom: await createToken(emu, key, { type: 'card', data: CARD, mask: { number: '****4242' } }),
      bank: await createToken(emu, key, { type: 'bank', data: BANK }),
      plain: await createToken(emu, key, { type: 'token', data: { email: 'jane@example.com' } }),
      masked: await createToken(emu, key, { type: 'token', data: 'jane@example.com', mask: 'j***@example.com' }),
    };
  }
  const shown: Record<Transform, Record<string, unknown>> = {
    reveal: {
      card: CARD,
      cardCustom: CARD,
      bank: BANK,
      plain: { email: 'jane@example.com' },
      masked: 'jane@example.com',
    },
    mask: {
      card: CARD_MASK,
      cardCustom: { number: '****4242' },
      bank: BANK_MASK,
      plain: ABSENT,
      masked: 'j***@example.com',
    },
    redact: { card: ABSENT, cardCustom: ABSENT, bank: ABSENT, plain: ABSENT, masked: ABSENT },
  };

  async function expectShown(
    emu: TestEmulator,
    key: string,
    tokens: Record<string, Token>,
    expected: Record<string, unknown>,
  ) {
    const listed = await emu.call<Page<Token>>('GET', '/tokens', { key });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(Object.keys(tokens).length);
    const byId = new Map(listed.body.data.map((token) => [token.id, token]));
    for (const [name, token] of Object.entries(tokens)) {
      const got = await emu.call<Token>('GET', `/tokens/${token.id}`, { key });
      expect(got.status, name).toBe(200);
      expectData(got.body, expected[name], `GET ${name}`);
      expectData(byId.get(token.id)!, expected[name], `list ${name}`);
      expect(byId.get(token.id), name).toEqual(got.body);
    }
  }

  it.each(['reveal', 'mask', 'redact'] as const)('applies a rule transform %s on GET and list', async (transform) => {
    const emu = await startEmulator({ inMemory: true });
    const tokens = await seed(emu);
    const app = await application(emu, {
      rules: [{ priority: 1, container: '/', transform, permissions: ['token:read'] }],
    });
    await expectShown(emu, app.key, tokens, shown[transform]);
  });

  it('reads with the implicit transform mask under plain token:read', async () => {
    const emu = await startEmulator({ inMemory: true });
    const tokens = await seed(emu);
    await expectShown(emu, emu.privateKey, tokens, shown.mask);
    const reader = await application(emu, { permissions: ['token:read'] });
    await expectShown(emu, reader.key, tokens, shown.mask);
  });

  it('reveals through plain token:use on /detokenize, whatever the read transform', async () => {
    const emu = await startEmulator({ inMemory: true });
    const tokens = await seed(emu);
    const result = await emu.call('POST', '/detokenize', {
      key: emu.privateKey,
      body: { card: `{{${tokens.card.id}}}`, bank: `{{${tokens.bank.id}}}` },
    });
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ card: CARD, bank: BANK });
  });
});

describe('access rules', () => {
  it('takes rules by ascending priority, whatever their order in the array', async () => {
    const emu = await startEmulator({ inMemory: true });
    const key = emu.privateKey;
    const high = await createToken(emu, key, { type: 'card', data: CARD });
    const low = await createToken(emu, key, { type: 'card', data: CARD, containers: ['/pci/low/'] });
    const sibling = await createToken(emu, key, { type: 'card', data: CARD, containers: ['/pcix/'] });
    const general = await createToken(emu, key, { type: 'token', data: 'g' });
    const app = await application(emu, {
      rules: [
        { priority: 30, container: '/', transform: 'reveal', permissions: ['token:read'] },
        { priority: 10, container: '/pci/high/', transform: 'mask', permissions: ['token:read'] },
        { priority: 20, container: '/pci/', transform: 'redact', permissions: ['token:read'] },
      ],
    });
    const read = async (token: Token) => (await emu.call<Token>('GET', `/tokens/${token.id}`, { key: app.key })).body;
    expectData(await read(high), CARD_MASK, '/pci/high/ by priority 10');
    expectData(await read(low), ABSENT, '/pci/low/ by priority 20');
    // "/pci/" is a prefix of paths, not of strings: /pcix/ falls through to "/".
    expectData(await read(sibling), CARD, '/pcix/ by priority 30');
    expectData(await read(general), 'g', '/general/high/ by priority 30');

    // The lowest number wins even over a more specific container.
    const broadFirst = await application(emu, {
      rules: [
        { priority: 2, container: '/pci/high/', transform: 'mask', permissions: ['token:read'] },
        { priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:read'] },
      ],
    });
    expectData(
      (await emu.call<Token>('GET', `/tokens/${high.id}`, { key: broadFirst.key })).body,
      CARD,
      'priority 1 on /pci/',
    );
  });

  it('covers sub-containers with a rule on a parent, not siblings or parents with a rule on a child', async () => {
    const emu = await startEmulator({ inMemory: true });
    const key = emu.privateKey;
    const high = await createToken(emu, key, { type: 'card', data: CARD });
    const low = await createToken(emu, key, { type: 'card', data: CARD, containers: ['/pci/low/'] });
    const parent = await createToken(emu, key, { type: 'card', data: CARD, containers: ['/pci/'] });
    const general = await createToken(emu, key, { type: 'token', data: 'g' });

    const onPci = await application(emu, {
      rules: [{ priority: 1, container: '/PCI/', transform: 'reveal', permissions: ['token:read'] }],
    });
    for (const token of [high, low, parent]) {
      const got = await emu.call<Token>('GET', `/tokens/${token.id}`, { key: onPci.key });
      expect(got.status, token.containers[0]).toBe(200);
      expect(got.body.data).toEqual(CARD);
    }
    expect((await emu.call('GET', `/tokens/${general.id}`, { key: onPci.key })).status).toBe(403);

    const onHigh = await application(emu, {
      rules: [{ priority: 1, container: '/pci/high/', transform: 'reveal', permissions: ['token:read'] }],
    });
    expect((await emu.call('GET', `/tokens/${high.id}`, { key: onHigh.key })).status).toBe(200);
    for (const token of [low, parent, general]) {
      const denied = await emu.call('GET', `/tokens/${token.id}`, { key: onHigh.key });
      expect(denied.status, token.containers[0]).toBe(403);
      expect(denied.body.detail).toContain('token:read');
    }
  });

  it('lets the first matching rule deny even when a later rule or a plain permission would grant', async () => {
    const emu = await startEmulator({ inMemory: true });
    const card = await createToken(emu, emu.privateKey, { type: 'card', data: CARD });
    const general = await createToken(emu, emu.privateKey, { type: 'token', data: 'g' });
    const app = await application(emu, {
      permissions: ['token:read'],
      rules: [
        { priority: 2, container: '/', transform: 'reveal', permissions: ['token:read'] },
        { priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:use'] },
      ],
    });
    const denied = await emu.call('GET', `/tokens/${card.id}`, { key: app.key });
    expect(denied.status).toBe(403);
    expect(denied.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(denied.body.detail).toContain('token:read');
    expect(denied.body.detail).toContain(card.id);
    expect((await emu.call<Token>('GET', `/tokens/${general.id}`, { key: app.key })).body.data).toBe('g');
    expect(await listIds(emu, app.key)).toEqual([general.id]);
    // The same first rule grants token:use on the card.
    expect((await emu.call('POST', '/detokenize', { key: app.key, body: `{{${card.id}}}` })).body).toEqual(CARD);
  });

  it('falls back to plain permissions where no rule matches, and denies without them', async () => {
    const emu = await startEmulator({ inMemory: true });
    const card = await createToken(emu, emu.privateKey, { type: 'card', data: CARD });
    const bank = await createToken(emu, emu.privateKey, { type: 'bank', data: BANK });
    const rule: Rule = { priority: 1, container: '/bank/', transform: 'reveal', permissions: ['token:read'] };

    const withPlain = await application(emu, { permissions: ['token:read'], rules: [rule] });
    expect((await emu.call<Token>('GET', `/tokens/${bank.id}`, { key: withPlain.key })).body.data).toEqual(BANK);
    expect((await emu.call<Token>('GET', `/tokens/${card.id}`, { key: withPlain.key })).body.data).toEqual(CARD_MASK);

    const rulesOnly = await application(emu, { rules: [rule] });
    expect((await emu.call<Token>('GET', `/tokens/${bank.id}`, { key: rulesOnly.key })).body.data).toEqual(BANK);
    const denied = await emu.call('GET', `/tokens/${card.id}`, { key: rulesOnly.key });
    expect(denied.status).toBe(403);
    expect(denied.body.title).toBe('Forbidden');
    expect(await listIds(emu, rulesOnly.key)).toEqual([bank.id]);
  });

  it('checks token:create against the containers of the new token', async () => {
    const emu = await startEmulator({ inMemory: true });
    const app = await application(emu, {
      rules: [
        { priority: 1, container: '/general/', transform: 'reveal', permissions: ['token:create', 'token:read'] },
      ],
    });
    expect((await emu.call('POST', '/tokens', { key: app.key, body: { type: 'token', data: 'ok' } })).status).toBe(201);
    const denied = await emu.call('POST', '/tokens', { key: app.key, body: { type: 'card', data: CARD } });
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toContain('token:create');
    expect(denied.body.detail).toContain('/pci/high/');
    expect(await listIds(emu, emu.privateKey)).toHaveLength(1);
  });

  it('answers 403 to a management key and 401 without a key on every token endpoint', async () => {
    const emu = await startEmulator({ inMemory: true });
    const token = await createToken(emu, emu.privateKey, { type: 'token', data: 'x' });
    const endpoints: [string, string, unknown][] = [
      ['POST', '/tokens', { type: 'token', data: 'y' }],
      ['GET', `/tokens/${token.id}`, undefined],
      ['DELETE', `/tokens/${token.id}`, undefined],
      ['POST', '/tokenize', { a: 'y' }],
      ['POST', '/detokenize', { a: `{{ ${token.id} }}` }],
    ];
    for (const [method, path, body] of endpoints) {
      const forbidden = await emu.call(method, path, { body, key: emu.managementKey });
      expect(forbidden.status, `${method} ${path}`).toBe(403);
      expect(forbidden.body.detail, `${method} ${path}`).toContain('management');
      expect((await emu.call(method, path, { body, key: null })).status, `${method} ${path}`).toBe(401);
      expect(
        (await emu.call(method, path, { body, key: 'key_local_pvt_doesnotexist00000000000' })).status,
        `${method} ${path}`,
      ).toBe(401);
    }
    expect((await emu.call('GET', '/tokens', { key: null })).status).toBe(401);
    // Nothing was written or deleted along the way.
    expect(await listIds(emu, emu.privateKey)).toEqual([token.id]);
  });

  it('answers 403 to a management key on GET /tokens', async () => {
    const emu = await startEmulator({ inMemory: true });
    await createToken(emu, emu.privateKey, { type: 'token', data: 'x' });
    expect((await emu.call('GET', '/tokens', { key: emu.managementKey })).status).toBe(403);
  });
});

describe('GET /tokens', () => {
  it('paginates in creation order, empty past the last page', async () => {
    const emu = await startEmulator({ inMemory: true });
    const ids = (
      await emu.call<string[]>('POST', '/tokenize', { key: emu.privateKey, body: ['t0', 't1', 't2', 't3', 't4'] })
    ).body;
    const page = await emu.call<Page<Token>>('GET', '/tokens?page=2&size=2', { key: emu.privateKey });
    expect(page.status).toBe(200);
    expect(page.body.pagination).toEqual({ total_items: 5, page_number: 2, page_size: 2, total_pages: 3 });
    expect(page.body.data.map((token) => token.id)).toEqual([ids[2], ids[3]]);
    const last = await emu.call<Page<Token>>('GET', '/tokens?page=3&size=2', { key: emu.privateKey });
    expect(last.body.data.map((token) => token.id)).toEqual([ids[4]]);
    const past = await emu.call<Page<Token>>('GET', '/tokens?page=4&size=2', { key: emu.privateKey });
    expect(past.status).toBe(200);
    expect(past.body.data).toEqual([]);
    expect(past.body.pagination).toEqual({ total_items: 5, page_number: 4, page_size: 2, total_pages: 3 });
    const defaults = await emu.call<Page<Token>>('GET', '/tokens', { key: emu.privateKey });
    expect(defaults.body.pagination).toEqual({ total_items: 5, page_number: 1, page_size: 20, total_pages: 1 });
    expect(defaults.body.data.map((token) => token.id)).toEqual(ids);
  });

  it('rejects bad list queries field by field', async () => {
    const emu = await startEmulator({ inMemory: true });
    for (const [query, field] of [
      ['page=0', 'page'],
      ['size=101', 'size'],
      ['size=0', 'size'],
      ['type=ssn', 'type'],
    ] as const) {
      const result = await emu.call('GET', `/tokens?${query}`, { key: emu.privateKey });
      expect(result.status, query).toBe(400);
      expect(Object.keys(result.body.errors), query).toEqual([field]);
    }
  });

  it('filters by type and by container prefix', async () => {
    const emu = await startEmulator({ inMemory: true });
    const key = emu.privateKey;
    const high = await createToken(emu, key, { type: 'card', data: CARD });
    const low = await createToken(emu, key, { type: 'card', data: CARD, containers: ['/pci/low/'] });
    const bank = await createToken(emu, key, { type: 'bank', data: BANK });
    const text = await createToken(emu, key, { type: 'token', data: 'x' });
    const inPci = await createToken(emu, key, {
      type: 'token',
      data: 'y',
      containers: ['/general/high/', '/pci/extra/'],
    });

    expect(await listIds(emu, key, '&type=card')).toEqual([high.id, low.id]);
    expect(await listIds(emu, key, '&type=bank')).toEqual([bank.id]);
    expect(await listIds(emu, key, '&type=token')).toEqual([text.id, inPci.id]);
    expect(await listIds(emu, key, '&container=/pci/')).toEqual([high.id, low.id, inPci.id]);
    expect(await listIds(emu, key, '&container=/PCI/HIGH/')).toEqual([high.id]);
    expect(await listIds(emu, key, '&container=/pci/&type=token')).toEqual([inPci.id]);
    expect(await listIds(emu, key, '&container=/nowhere/')).toEqual([]);
    const counted = await emu.call<Page<Token>>('GET', '/tokens?type=card&size=1', { key });
    expect(counted.body.pagination.total_items).toBe(2);
  });

  it('leaves out tokens the caller may not read instead of failing', async () => {
    const emu = await startEmulator({ inMemory: true });
    const key = emu.privateKey;
    const cards = [
      await createToken(emu, key, { type: 'card', data: CARD }),
      await createToken(emu, key, { type: 'card', data: CARD }),
    ];
    await createToken(emu, key, { type: 'token', data: 'x' });
    await createToken(emu, key, { type: 'bank', data: BANK });
    const app = await application(emu, {
      rules: [{ priority: 1, container: '/pci/', transform: 'mask', permissions: ['token:read'] }],
    });
    const listed = await emu.call<Page<Token>>('GET', '/tokens?size=1', { key: app.key });
    expect(listed.status).toBe(200);
    expect(listed.body.pagination).toEqual({ total_items: 2, page_number: 1, page_size: 1, total_pages: 2 });
    expect(listed.body.data.map((token) => token.id)).toEqual([cards[0]!.id]);
    expect(listed.body.data[0]!.data).toEqual(CARD_MASK);
    expect(await listIds(emu, app.key)).toEqual(cards.map((card) => card.id));

    // holding token:read somewhere (here: on /bank/, where there is one token) lists what it covers
    const bankOnly = await application(emu, {
      rules: [{ priority: 1, container: '/bank/', transform: 'redact', permissions: ['token:read'] }],
    });
    const banks = await emu.call<Page<Token>>('GET', '/tokens', { key: bankOnly.key });
    expect(banks.status).toBe(200);
    expect(banks.body.pagination.total_items).toBe(1);
    // without token:read anywhere the list is refused, not answered empty
    const nothing = await application(emu, { permissions: ['token:create'] });
    expect((await emu.call('GET', '/tokens', { key: nothing.key })).status).toBe(403);
  });

  it('filters by custom ids, case-sensitively', async () => {
    const emu = await startEmulator({ inMemory: true });
    await createToken(emu, emu.privateKey, { id: 'Order-1', type: 'token', data: 'x' });
    await createToken(emu, emu.privateKey, { id: 'order-2', type: 'token', data: 'y' });
    expect(await listIds(emu, emu.privateKey, '&id=Order-1&id=order-2')).toEqual(['Order-1', 'order-2']);
  });
});

describe('DELETE /tokens/{id}', () => {
  it('deletes with 204, then answers 404', async () => {
    const emu = await startEmulator({ inMemory: true });
    const token = await createToken(emu, emu.privateKey, { type: 'card', data: CARD });
    const other = await createToken(emu, emu.privateKey, { type: 'token', data: 'stays' });
    const deleted = await emu.call('DELETE', `/tokens/${token.id}`, { key: emu.privateKey });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    const gone = await emu.call('GET', `/tokens/${token.id}`, { key: emu.privateKey });
    expect(gone.status).toBe(404);
    expect(gone.body.detail).toContain(token.id);
    expect((await emu.call('DELETE', `/tokens/${token.id}`, { key: emu.privateKey })).status).toBe(404);
    expect(await listIds(emu, emu.privateKey)).toEqual([other.id]);
    const detokenized = await emu.call('POST', '/detokenize', { key: emu.privateKey, body: `{{ ${token.id} }}` });
    expect(detokenized.status).toBe(400);
  });

  it('needs token:delete on the container', async () => {
    const emu = await startEmulator({ inMemory: true });
    const card = await createToken(emu, emu.privateKey, { type: 'card', data: CARD });
    const general = await createToken(emu, emu.privateKey, { type: 'token', data: 'g' });
    const reader = await application(emu, { permissions: ['token:read', 'token:use', 'token:create'] });
    const denied = await emu.call('DELETE', `/tokens/${card.id}`, { key: reader.key });
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toContain('token:delete');
    expect((await emu.call('GET', `/tokens/${card.id}`, { key: emu.privateKey })).status).toBe(200);

    const generalOnly = await application(emu, {
      rules: [{ priority: 1, container: '/general/', transform: 'redact', permissions: ['token:delete'] }],
    });
    expect((await emu.call('DELETE', `/tokens/${card.id}`, { key: generalOnly.key })).status).toBe(403);
    expect((await emu.call('DELETE', `/tokens/${general.id}`, { key: generalOnly.key })).status).toBe(204);
    expect(await listIds(emu, emu.privateKey)).toEqual([card.id]);
  });

  it('answers 404 for an unknown id and 400 for a malformed one', async () => {
    const emu = await startEmulator({ inMemory: true });
    const unknown = await emu.call('DELETE', '/tokens/no-such-token', { key: emu.privateKey });
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toContain('no-such-token');
    const malformed = await emu.call('GET', '/tokens/-bad', { key: emu.privateKey });
    expect(malformed.status).toBe(400);
    expect(Object.keys(malformed.body.errors)).toEqual(['id']);
  });
});

describe('POST /tokenize', () => {
  it('walks objects and arrays: specs become token objects, primitives token ids, null stays null', async () => {
    const emu = await startEmulator({ inMemory: true });
    const reader = await revealer(emu);
    const result = await emu.call('POST', '/tokenize', {
      key: emu.privateKey,
      body: {
        name: 'Jane Doe',
        age: 42,
        vip: true,
        nothing: null,
        payment: {
          card: { type: 'card', data: CARD, metadata: { order: 'o-1' } },
          notes: ['first', null, { type: 'bank', data: BANK }],
        },
        custom: { type: 'token', id: 'my-custom-id', data: { any: ['json'] }, containers: ['/Custom/'] },
      },
    });
    expect(result.status).toBe(201);
    expect(result.headers['content-type']).toMatch(/^application\/json/);
    const body = result.body;
    expect(body.nothing).toBeNull();
    expect(body.payment.notes[1]).toBeNull();
    expect(body.payment.card).toMatchObject({
      type: 'card',
      containers: ['/pci/high/'],
      metadata: { order: 'o-1' },
      data: CARD_MASK,
    });
    expect(body.payment.notes[2]).toMatchObject({ type: 'bank', containers: ['/bank/high/'], data: BANK_MASK });
    expect(body.custom).toMatchObject({ id: 'my-custom-id', type: 'token', containers: ['/custom/'] });
    expect(body.custom).not.toHaveProperty('data');

    const primitives: [string, unknown][] = [
      [body.name, 'Jane Doe'],
      [body.age, 42],
      [body.vip, true],
      [body.payment.notes[0], 'first'],
    ];
    for (const [id, data] of primitives) {
      expect(id).toMatch(UUID);
      const got = await emu.call<Token>('GET', `/tokens/${id}`, { key: reader.key });
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject({ type: 'token', containers: ['/general/high/'], data });
    }
    expect((await emu.call<Token>('GET', `/tokens/${body.payment.card.id}`, { key: reader.key })).body.data).toEqual(
      CARD,
    );
    expect((await emu.call<Token>('GET', '/tokens/my-custom-id', { key: reader.key })).body.data).toEqual({
      any: ['json'],
    });
    expect(await listIds(emu, reader.key)).toHaveLength(7);
  });

  it('tokenizes a bare primitive, and answers null for null', async () => {
    const emu = await startEmulator({ inMemory: true });
    const id = await emu.call('POST', '/tokenize', { key: emu.privateKey, body: 'just a string' });
    expect(id.status).toBe(201);
    expect(id.body).toMatch(UUID);
    expect((await emu.call('POST', '/detokenize', { key: emu.privateKey, body: `{{${id.body}}}` })).body).toBe(
      'just a string',
    );
    const none = await emu.call('POST', '/tokenize', { key: emu.privateKey, body: null });
    expect(none.status).toBe(201);
    expect(none.text).toBe('null');
    expect(await listIds(emu, emu.privateKey)).toEqual([id.body]);
  });

  it('is all or nothing: one invalid leaf fails the request with its path, and nothing is written', async () => {
    const emu = await startEmulator({ inMemory: true });
    const result = await emu.call('POST', '/tokenize', {
      key: emu.privateKey,
      body: {
        a: 'valid',
        b: [
          { type: 'card', data: CARD },
          { type: 'card', data: { ...CARD, number: '4242424242424241' } },
        ],
        c: { d: { type: 'bank', data: { ...BANK, account_number: '1' } } },
      },
    });
    expect(result.status).toBe(400);
    expect(Object.keys(result.body.errors).sort()).toEqual(['b[1].data.number', 'c.d.data.account_number']);
    expect(result.body.detail).toContain('b[1].data.number');
    expect(await listIds(emu, emu.privateKey)).toEqual([]);
  });

  it('refuses duplicate custom ids inside one request, and ids that already exist', async () => {
    const emu = await startEmulator({ inMemory: true });
    await createToken(emu, emu.privateKey, { id: 'taken', type: 'token', data: 'x' });
    const result = await emu.call('POST', '/tokenize', {
      key: emu.privateKey,
      body: [
        { id: 'twice', type: 'token', data: 1 },
        { id: 'twice', type: 'token', data: 2 },
        { id: 'taken', type: 'token', data: 3 },
      ],
    });
    expect(result.status).toBe(400);
    expect(Object.keys(result.body.errors).sort()).toEqual(['[1].id', '[2].id']);
    expect(await listIds(emu, emu.privateKey)).toEqual(['taken']);
  });

  it('answers 403 without token:create and writes nothing', async () => {
    const emu = await startEmulator({ inMemory: true });
    const reader = await application(emu, { permissions: ['token:read', 'token:use'] });
    const denied = await emu.call('POST', '/tokenize', {
      key: reader.key,
      body: { a: 'x', b: [1, 2], c: { type: 'card', data: CARD } },
    });
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toContain('token:create');
    // Creating in /general/ only: the card leaf is refused, and the strings before it are not written.
    const general = await application(emu, {
      rules: [{ priority: 1, container: '/general/', transform: 'reveal', permissions: ['token:create'] }],
    });
    const partial = await emu.call('POST', '/tokenize', {
      key: general.key,
      body: ['x', 'y', { type: 'card', data: CARD }],
    });
    expect(partial.status).toBe(403);
    expect(partial.body.detail).toContain('/pci/high/');
    expect(await listIds(emu, emu.privateKey)).toEqual([]);
  });
});

describe('POST /detokenize', () => {
  async function tokens(emu: TestEmulator) {
    const key = emu.privateKey;
    return {
      card: await createToken(emu, key, { type: 'card', data: CARD }),
      text: await createToken(emu, key, { type: 'token', data: 'world' }),
      number: await createToken(emu, key, { type: 'token', data: 42 }),
      object: await createToken(emu, key, { type: 'token', data: { a: [1, 'b'] } }),
    };
  }

  it('replaces a whole-string expression by the data itself', async () => {
    const emu = await startEmulator({ inMemory: true });
    const t = await tokens(emu);
    const result = await emu.call('POST', '/detokenize', {
      key: emu.privateKey,
      body: {
        card: `{{ ${t.card.id} }}`,
        tight: `{{${t.text.id}}}`,
        wide: `{{    ${t.number.id}   }}`,
        nested: [{ o: `{{${t.object.id}}}` }],
        keep: 7,
      },
    });
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ card: CARD, tight: 'world', wide: 42, nested: [{ o: { a: [1, 'b'] } }], keep: 7 });
  });

  it('replaces an embedded expression by text, complex data as JSON', async () => {
    const emu = await startEmulator({ inMemory: true });
    const t = await tokens(emu);
    const result = await emu.call('POST', '/detokenize', {
      key: emu.privateKey,
      body: {
        card: `card=${'{{'}${t.card.id}}};`,
        greeting: `hello {{ ${t.text.id} }}, you are {{${t.number.id}}}`,
        object: ` {{${t.object.id}}}`,
      },
    });
    expect(result.status).toBe(200);
    expect(result.body).toEqual({
      card: `card=${JSON.stringify(CARD)};`,
      greeting: 'hello world, you are 42',
      object: ' {"a":[1,"b"]}',
    });
  });

  it('answers a bare JSON string body, and returns a body without expressions unchanged', async () => {
    const emu = await startEmulator({ inMemory: true });
    const t = await tokens(emu);
    const bare = await emu.call('POST', '/detokenize', { key: emu.privateKey, body: `{{ ${t.card.id} }}` });
    expect(bare.status).toBe(200);
    expect(bare.body).toEqual(CARD);
    const text = await emu.call('POST', '/detokenize', { key: emu.privateKey, body: `say {{${t.text.id}}}` });
    expect(text.headers['content-type']).toMatch(/^application\/json/);
    expect(text.text).toBe('"say world"');

    const plain = {
      a: 1,
      b: ['x', null, { c: '{ not an expression }', d: '{{ }}', e: false }],
      '{{key}}': 'keys are not searched',
    };
    const unchanged = await emu.call('POST', '/detokenize', { key: emu.privateKey, body: plain });
    expect(unchanged.status).toBe(200);
    expect(unchanged.body).toEqual(plain);
  });

  it('answers 400 naming an unknown token', async () => {
    const emu = await startEmulator({ inMemory: true });
    const t = await tokens(emu);
    const result = await emu.call('POST', '/detokenize', {
      key: emu.privateKey,
      body: { ok: `{{${t.text.id}}}`, bad: '{{ no-such-token }}' },
    });
    expect(result.status).toBe(400);
    expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(result.body.detail).toContain('no-such-token');
    expect(result.body.errors).toEqual({ 'no-such-token': ['no such token'] });
    expect(result.text).not.toContain('world');
  });

  it('answers 403 for a token in a container without token:use', async () => {
    const emu = await startEmulator({ inMemory: true });
    const t = await tokens(emu);
    const app = await application(emu, {
      rules: [{ priority: 1, container: '/general/', transform: 'reveal', permissions: ['token:use', 'token:read'] }],
    });
    expect((await emu.call('POST', '/detokenize', { key: app.key, body: `{{${t.text.id}}}` })).body).toBe('world');
    const denied = await emu.call('POST', '/detokenize', {
      key: app.key,
      body: { a: `{{${t.text.id}}}`, b: `{{${t.card.id}}}` },
    });
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toContain('token:use');
    expect(denied.body.detail).toContain(t.card.id);
    expect(denied.text).not.toContain('world');
    expect(denied.text).not.toContain(CARD.number);
    // token:read alone does not detokenize.
    const reader = await application(emu, { permissions: ['token:read'] });
    expect((await emu.call('POST', '/detokenize', { key: reader.key, body: `{{${t.text.id}}}` })).status).toBe(403);
  });

  it('detokenizes at most 100 distinct tokens at once', async () => {
    const emu = await startEmulator({ inMemory: true });
    const values = Array.from({ length: 101 }, (_, i) => `value-${i}`);
    const created = await emu.call<string[]>('POST', '/tokenize', { key: emu.privateKey, body: values });
    expect(created.status).toBe(201);
    const ids = created.body;
    expect(new Set(ids).size).toBe(101);

    const hundred = ids.slice(0, 100).map((id) => `{{ ${id} }}`);
    const ok = await emu.call('POST', '/detokenize', {
      key: emu.privateKey,
      body: [...hundred, `again {{${ids[0]}}}`],
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual([...values.slice(0, 100), 'again value-0']);

    const over = await emu.call('POST', '/detokenize', { key: emu.privateKey, body: ids.map((id) => `{{${id}}}`) });
    expect(over.status).toBe(400);
    expect(over.body.detail).toContain('100');
    expect(over.text).not.toContain('value-');
  });
});

describe('tenant isolation', () => {
  it("hides another tenant's tokens on GET, DELETE, list and detokenize", async () => {
    const emu = await startEmulator({ inMemory: true });
    const other = await createTenant(emu);
    const theirs = await createToken(emu, other.private_key, { type: 'token', data: 'their secret' });
    const mine = await createToken(emu, emu.privateKey, { type: 'token', data: 'mine' });

    for (const method of ['GET', 'DELETE']) {
      const result = await emu.call(method, `/tokens/${theirs.id}`, { key: emu.privateKey });
      expect(result.status, method).toBe(404);
      expect(result.body.detail).toBe(`No token with id ${theirs.id}.`);
    }
    expect(await listIds(emu, emu.privateKey)).toEqual([mine.id]);
    expect(await listIds(emu, other.private_key)).toEqual([theirs.id]);

    const foreign = await emu.call('POST', '/detokenize', { key: emu.privateKey, body: `{{ ${theirs.id} }}` });
    const missing = await emu.call('POST', '/detokenize', {
      key: emu.privateKey,
      body: '{{ 00000000-0000-4000-8000-000000000000 }}',
    });
    expect(foreign.status).toBe(400);
    expect(foreign.text).not.toContain('their secret');
    const shape = (body: { detail: string; errors: unknown; title: string }, id: string) =>
      JSON.stringify({ title: body.title, detail: body.detail, errors: body.errors }).replaceAll(id, '<id>');
    expect(shape(foreign.body, theirs.id)).toBe(shape(missing.body, '00000000-0000-4000-8000-000000000000'));

    // Still there for its owner.
    expect((await emu.call('POST', '/detokenize', { key: other.private_key, body: `{{ ${theirs.id} }}` })).body).toBe(
      'their secret',
    );
  });

  it("lets each tenant use the same custom id without seeing the other's", async () => {
    const emu = await startEmulator({ inMemory: true });
    const other = await createTenant(emu);
    await createToken(emu, other.private_key, { id: 'shared-id', type: 'token', data: 'theirs' });
    await createToken(emu, emu.privateKey, { id: 'shared-id', type: 'token', data: 'mine' });
    expect((await emu.call('POST', '/detokenize', { key: emu.privateKey, body: '{{shared-id}}' })).body).toBe('mine');
    expect((await emu.call('POST', '/detokenize', { key: other.private_key, body: '{{shared-id}}' })).body).toBe(
      'theirs',
    );
    expect((await emu.call('DELETE', '/tokens/shared-id', { key: emu.privateKey })).status).toBe(204);
    expect((await emu.call('POST', '/detokenize', { key: other.private_key, body: '{{shared-id}}' })).body).toBe(
      'theirs',
    );
  });
});

describe('encryption at rest', () => {
  const PRIVATE_KEY = 'key_local_pvt_tokens-at-rest-test';
  const CARD_AT_REST = { number: '4000056655665556', expiration_month: 7, expiration_year: 2099, cvc: '7319' };
  const SECRET = 'zebra-plaintext-canary-5f1c';

  async function filesUnder(dir: string): Promise<string[]> {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    return entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
  }

  it('stores no plaintext, keeps master.key at 0600, and needs the same master key to read', async () => {
    const emu = await startEmulator({ privateKey: PRIVATE_KEY });
    const card = await createToken(emu, PRIVATE_KEY, { type: 'card', data: CARD_AT_REST });
    const text = await createToken(emu, PRIVATE_KEY, {
      type: 'token',
      data: { note: SECRET },
      metadata: { kind: 'canary' },
    });
    await emu.dispose();

    const svcDir = path.join(emu.dir, '.svc');
    const files = await filesUnder(path.join(svcDir, 'data', 'tokens'));
    expect(files.length).toBeGreaterThan(0);
    const stored = (await Promise.all(files.map((file) => readFile(file, 'utf8')))).join('\n');
    expect(stored).toContain(card.id);
    expect(stored).toContain(text.id);
    expect(stored).toContain('canary'); // metadata is not secret, so the records really are here
    expect(stored).not.toContain(CARD_AT_REST.number);
    expect(stored).not.toContain(`"${CARD_AT_REST.cvc}"`);
    expect(stored).not.toContain('cvc');
    expect(stored).not.toContain(SECRET);

    expect((await stat(path.join(svcDir, 'data.json'))).isFile()).toBe(true);
    const masterKey = await stat(path.join(svcDir, 'master.key'));
    expect(masterKey.mode & 0o777).toBe(0o600);

    const restarted = await startEmulator({ dir: emu.dir, privateKey: PRIVATE_KEY });
    const body = { card: `{{ ${card.id} }}`, text: `{{ ${text.id} }}` };
    const revealed = await restarted.call('POST', '/detokenize', { key: PRIVATE_KEY, body });
    expect(revealed.status).toBe(200);
    expect(revealed.body).toEqual({ card: CARD_AT_REST, text: { note: SECRET } });
    await restarted.dispose();

    // another master key is refused at start, before anything could be misread
    await expect(
      startEmulator({ dir: emu.dir, privateKey: PRIVATE_KEY, masterKey: randomBytes(32).toString('base64') }),
    ).rejects.toThrow(/master key .* is not the one this store was written with/);
  });

  it('answers 500 naming the master key, never the data, for a token sealed under another key', async () => {
    const emu = await startEmulator({ privateKey: PRIVATE_KEY });
    const card = await createToken(emu, PRIVATE_KEY, { type: 'card', data: CARD });
    // Re-seal the stored record under a different key, as a store copied from elsewhere would be.
    await emu.dispose();
    const file = (await readdir(path.join(emu.dir, '.svc', 'data', 'tokens'))).map((name) =>
      path.join(emu.dir, '.svc', 'data', 'tokens', name),
    );
    const { Cipher } = await import('../../../src/emulator/crypto/cipher.js');
    const other = new Cipher(randomBytes(32));
    for (const shard of file) {
      const content = JSON.parse(await readFile(shard, 'utf8'));
      for (const record of content.records)
        if (record.id === card.id) record.secret = other.seal({ data: CARD }, `token:${record.tenant_id}:${record.id}`);
      await writeFile(shard, JSON.stringify(content));
    }
    const restarted = await startEmulator({ dir: emu.dir, privateKey: PRIVATE_KEY });
    const failed = await restarted.call('POST', '/detokenize', {
      key: PRIVATE_KEY,
      body: { card: `{{ ${card.id} }}` },
    });
    expect(failed.status).toBe(500);
    expect(failed.body.detail).toContain('master key');
    expect(failed.text).not.toContain(CARD.number);
  });
});
