import { describe, expect, it } from 'vitest';
import { http, startEmulator } from '../../helpers/emulator.js';

const privateApp = { name: 'backend', type: 'private', permissions: ['token:read', 'token:use'] };

describe('Applications API', () => {
  it('creates an Application and returns its key once', async () => {
    const emu = await startEmulator({ inMemory: true });
    const created = await emu.call('POST', '/applications', { body: privateApp });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'backend',
      type: 'private',
      permissions: ['token:read', 'token:use'],
      rules: [],
      tenant_id: emu.tenantId,
      expires_at: null,
    });
    expect(created.body.key).toMatch(/^key_local_pvt_[1-9A-HJ-NP-Za-km-z]{22}$/);
    expect(created.body.created_by).toBeDefined();
    expect(created.body).not.toHaveProperty('key_hash');

    const got = await emu.call('GET', `/applications/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty('key');
    expect(got.body).toEqual(Object.fromEntries(Object.entries(created.body).filter(([field]) => field !== 'key')));

    const listed = await emu.call('GET', '/applications');
    for (const app of listed.body.data) expect(app).not.toHaveProperty('key');
    expect(listed.body.data.map((app: { id: string }) => app.id)).toContain(created.body.id);
  });

  it('authenticates the new key and answers GET /applications/key with its owner', async () => {
    const emu = await startEmulator({ inMemory: true });
    const created = await emu.call('POST', '/applications', {
      body: { name: 'reader', type: 'management', permissions: ['application:read'] },
    });
    const self = await emu.call('GET', '/applications/key', { key: created.body.key });
    expect(self.status).toBe(200);
    expect(self.body.id).toBe(created.body.id);
    expect(self.body).not.toHaveProperty('key');
  });

  it('lists with pagination and an id filter, empty past the last page', async () => {
    const emu = await startEmulator({ inMemory: true });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await emu.call('POST', '/applications', { body: { ...privateApp, name: `app-${i}` } })).body.id);
    }
    const page = await emu.call('GET', '/applications?page=2&size=3');
    expect(page.body.pagination).toEqual({ total_items: 7, page_number: 2, page_size: 3, total_pages: 3 });
    expect(page.body.data).toHaveLength(3);
    const past = await emu.call('GET', '/applications?page=9&size=3');
    expect(past.status).toBe(200);
    expect(past.body.data).toEqual([]);
    expect(past.body.pagination.total_items).toBe(7);

    const filtered = await emu.call('GET', `/applications?id=${ids[1]}&id=${ids[3]}`);
    expect(filtered.body.data.map((app: { id: string }) => app.id)).toEqual([ids[1], ids[3]]);
    const single = await emu.call('GET', `/applications?id=${ids[4]}`);
    expect(single.body.data.map((app: { id: string }) => app.id)).toEqual([ids[4]]);
  });

  it('rejects bad list queries field by field', async () => {
    const emu = await startEmulator({ inMemory: true });
    for (const [query, field] of [
      ['page=0', 'page'],
      ['size=101', 'size'],
      ['size=abc', 'size'],
      ['id=nope', 'id[0]'],
    ] as const) {
      const result = await emu.call('GET', `/applications?${query}`);
      expect(result.status, query).toBe(400);
      expect(Object.keys(result.body.errors), query).toContain(field);
    }
  });

  it('updates name, permissions and rules; keeps what is not given', async () => {
    const emu = await startEmulator({ inMemory: true });
    const created = (await emu.call('POST', '/applications', { body: privateApp })).body;
    const rule = {
      description: 'cards',
      priority: 1,
      container: '/PCI/',
      transform: 'mask',
      permissions: ['token:read'],
    };
    const updated = await emu.call('PUT', `/applications/${created.id}`, { body: { name: 'renamed', rules: [rule] } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      name: 'renamed',
      permissions: privateApp.permissions,
      rules: [{ ...rule, container: '/pci/' }],
    });
    expect(updated.body).not.toHaveProperty('key');
    expect(Date.parse(updated.body.modified_at)).toBeGreaterThanOrEqual(Date.parse(created.modified_at));

    const again = await emu.call('PUT', `/applications/${created.id}`, {
      body: { name: 'renamed', permissions: ['token:create'] },
    });
    expect(again.body.permissions).toEqual(['token:create']);
    expect(again.body.rules).toHaveLength(1);
    // the key still works after an update
    const self = await emu.call('GET', `/applications/${created.id}`);
    expect(self.body.name).toBe('renamed');
  });

  it('regenerates a key: the old one stops working at once', async () => {
    const emu = await startEmulator({ inMemory: true });
    const created = (
      await emu.call('POST', '/applications', {
        body: { name: 'm', type: 'management', permissions: ['application:read'] },
      })
    ).body;
    expect((await emu.call('GET', '/applications/key', { key: created.key })).status).toBe(200);
    const regenerated = await emu.call('POST', `/applications/${created.id}/regenerate`);
    expect(regenerated.status).toBe(200);
    expect(regenerated.body.key).toMatch(/^key_local_mgt_/);
    expect(regenerated.body.key).not.toBe(created.key);
    expect((await emu.call('GET', '/applications/key', { key: created.key })).status).toBe(401);
    expect((await emu.call('GET', '/applications/key', { key: regenerated.body.key })).status).toBe(200);
  });

  it('deletes an Application and its key', async () => {
    const emu = await startEmulator({ inMemory: true });
    const created = (
      await emu.call('POST', '/applications', {
        body: { name: 'm', type: 'management', permissions: ['application:read'] },
      })
    ).body;
    const deleted = await emu.call('DELETE', `/applications/${created.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await emu.call('GET', `/applications/${created.id}`)).status).toBe(404);
    expect((await emu.call('DELETE', `/applications/${created.id}`)).status).toBe(404);
    expect((await emu.call('GET', '/applications/key', { key: created.key })).status).toBe(401);
  });

  it('answers 404 with a problem for unknown ids on every endpoint', async () => {
    const emu = await startEmulator({ inMemory: true });
    const id = '00000000-0000-4000-8000-000000000000';
    for (const [method, path, body] of [
      ['GET', `/applications/${id}`, undefined],
      ['PUT', `/applications/${id}`, { name: 'x', permissions: ['application:read'] }],
      ['POST', `/applications/${id}/regenerate`, undefined],
      ['DELETE', `/applications/${id}`, undefined],
    ] as const) {
      const result = await emu.call(method, path, { body });
      expect(result.status, `${method} ${path}`).toBe(404);
      expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(result.body).toMatchObject({ status: 404, title: 'Not found', type: 'urn:svc:problem:not-found' });
      expect(result.body.detail).toContain(id);
    }
  });

  it('deletes an Application when expires_at passes, with its key', async () => {
    let now = Date.parse('2030-01-01T00:00:00Z');
    const emu = await startEmulator({ inMemory: true, clock: () => new Date(now) });
    const created = (
      await emu.call('POST', '/applications', {
        body: {
          name: 'temp',
          type: 'management',
          permissions: ['application:read'],
          expires_at: '2030-01-01T00:00:05+00:00',
        },
      })
    ).body;
    expect(created.expires_at).toBe('2030-01-01T00:00:05.000Z');
    expect((await emu.call('GET', '/applications/key', { key: created.key })).status).toBe(200);
    now += 6_000;
    expect((await emu.call('GET', '/applications/key', { key: created.key })).status).toBe(401);
    expect((await emu.call('GET', `/applications/${created.id}`)).status).toBe(404);
    const listed = await emu.call('GET', '/applications');
    expect(listed.body.data.map((app: { id: string }) => app.id)).not.toContain(created.id);
  });

  it('sweeps expired Applications out of the store on a timer', async () => {
    const emu = await startEmulator();
    const expiresAt = new Date(Date.now() + 300).toISOString();
    const created = (
      await emu.call('POST', '/applications', {
        body: { name: 'short-lived', type: 'private', permissions: ['token:read'], expires_at: expiresAt },
      })
    ).body;
    await new Promise((resolve) => setTimeout(resolve, 600));
    await emu.emulator.dispose();
    const { readFile } = await import('node:fs/promises');
    const stored = await readFile(`${emu.dir}/.svc/data/applications.json`, 'utf8');
    expect(stored).not.toContain(created.id);
  });
});

describe('Applications validation', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['missing name', { type: 'private', permissions: ['token:read'] }, 'name'],
    ['missing type', { name: 'x', permissions: ['token:read'] }, 'type'],
    ['name not a string', { name: 12, type: 'private', permissions: ['token:read'] }, 'name'],
    ['empty name', { name: '', type: 'private', permissions: ['token:read'] }, 'name'],
    ['name over 200', { name: 'x'.repeat(201), type: 'private', permissions: ['token:read'] }, 'name'],
    ['unknown type', { name: 'x', type: 'admin', permissions: ['token:read'] }, 'type'],
    ['permissions not an array', { name: 'x', type: 'private', permissions: 'token:read' }, 'permissions'],
    ['permission not a string', { name: 'x', type: 'private', permissions: [1] }, 'permissions[0]'],
    ['unknown permission', { name: 'x', type: 'private', permissions: ['token:fly'] }, 'permissions[0]'],
    ['permission of another type', { name: 'x', type: 'private', permissions: ['application:read'] }, 'permissions[0]'],
    ['public with token:read', { name: 'x', type: 'public', permissions: ['token:read'] }, 'permissions[0]'],
    ['nothing granted', { name: 'x', type: 'private' }, 'permissions'],
    ['empty grants', { name: 'x', type: 'private', permissions: [], rules: [] }, 'permissions'],
    ['unknown field', { name: 'x', type: 'private', permissions: ['token:read'], colour: 'red' }, 'colour'],
    [
      'expires_at not a date',
      { name: 'x', type: 'private', permissions: ['token:read'], expires_at: 'tomorrow' },
      'expires_at',
    ],
    [
      'expires_at in the past',
      { name: 'x', type: 'private', permissions: ['token:read'], expires_at: '2001-01-01T00:00:00Z' },
      'expires_at',
    ],
    [
      'rules on management',
      {
        name: 'x',
        type: 'management',
        rules: [{ priority: 1, container: '/a/', transform: 'mask', permissions: ['token:read'] }],
      },
      'rules',
    ],
    [
      'rule priority 0',
      {
        name: 'x',
        type: 'private',
        rules: [{ priority: 0, container: '/a/', transform: 'mask', permissions: ['token:read'] }],
      },
      'rules[0].priority',
    ],
    [
      'rule priority not an integer',
      {
        name: 'x',
        type: 'private',
        rules: [{ priority: 1.5, container: '/a/', transform: 'mask', permissions: ['token:read'] }],
      },
      'rules[0].priority',
    ],
    [
      'rule without container',
      { name: 'x', type: 'private', rules: [{ priority: 1, transform: 'mask', permissions: ['token:read'] }] },
      'rules[0].container',
    ],
    [
      'container without slashes',
      {
        name: 'x',
        type: 'private',
        rules: [{ priority: 1, container: 'pci', transform: 'mask', permissions: ['token:read'] }],
      },
      'rules[0].container',
    ],
    [
      'container and conditions',
      {
        name: 'x',
        type: 'private',
        rules: [
          {
            priority: 1,
            container: '/a/',
            conditions: [{ attribute: 'id', operator: 'equals', value: 'x' }],
            transform: 'mask',
            permissions: ['token:read'],
          },
        ],
      },
      'rules[0].conditions',
    ],
    [
      'bad transform',
      {
        name: 'x',
        type: 'private',
        rules: [{ priority: 1, container: '/a/', transform: 'show', permissions: ['token:read'] }],
      },
      'rules[0].transform',
    ],
    [
      'rule without permissions',
      { name: 'x', type: 'private', rules: [{ priority: 1, container: '/a/', transform: 'mask', permissions: [] }] },
      'rules[0].permissions',
    ],
    [
      'duplicate priority',
      {
        name: 'x',
        type: 'private',
        rules: [1, 2].map((n) => ({
          priority: 1,
          container: `/c${n}/`,
          transform: 'mask',
          permissions: ['token:read'],
        })),
      },
      'rules[1].priority',
    ],
    [
      'rule unknown field',
      {
        name: 'x',
        type: 'private',
        rules: [{ priority: 1, container: '/a/', transform: 'mask', permissions: ['token:read'], x: 1 }],
      },
      'rules[0].x',
    ],
  ];

  it.each(cases)('create rejects %s', async (_label, body, field) => {
    const emu = await startEmulator({ inMemory: true });
    const result = await emu.call('POST', '/applications', { body });
    expect(result.status).toBe(400);
    expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(result.body).toMatchObject({ status: 400, title: 'Validation failed', type: 'urn:svc:problem:validation' });
    expect(Object.keys(result.body.errors)).toContain(field);
    expect(result.body.detail).toContain(field);
    expect((await emu.call('GET', '/applications')).body.pagination.total_items).toBe(2);
  });

  it('update requires a name, non-empty permissions when given, and valid grants', async () => {
    const emu = await startEmulator({ inMemory: true });
    const created = (await emu.call('POST', '/applications', { body: privateApp })).body;
    const checks: [Record<string, unknown>, string][] = [
      [{ permissions: ['token:read'] }, 'name'],
      [{ name: 'x', permissions: [] }, 'permissions'],
      [{ name: 'x', type: 'public' }, 'type'],
      [{ name: 'x', permissions: ['proxy:read'] }, 'permissions[0]'],
      [{ name: 'y'.repeat(201) }, 'name'],
    ];
    for (const [body, field] of checks) {
      const result = await emu.call('PUT', `/applications/${created.id}`, { body });
      expect(result.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(result.body.errors)).toContain(field);
    }
    expect((await emu.call('GET', `/applications/${created.id}`)).body.name).toBe('backend');
  });

  it('rejects ids that are not UUIDs', async () => {
    const emu = await startEmulator({ inMemory: true });
    const result = await emu.call('GET', '/applications/not-a-uuid');
    expect(result.status).toBe(400);
    expect(result.body.errors).toEqual({ id: ['must be a UUID'] });
  });

  it('reports every field error at once', async () => {
    const emu = await startEmulator({ inMemory: true });
    const result = await emu.call('POST', '/applications', { body: { name: 5, type: 'nope' } });
    expect(Object.keys(result.body.errors).sort()).toEqual(['name', 'type']);
  });
});

describe('Applications permissions', () => {
  it('requires a key (401) and the right permission (403) for each endpoint', async () => {
    const emu = await startEmulator({ inMemory: true });
    const target = (await emu.call('POST', '/applications', { body: privateApp })).body;
    const readOnly = (
      await emu.call('POST', '/applications', {
        body: { name: 'ro', type: 'management', permissions: ['application:read'] },
      })
    ).body.key;
    const endpoints: [string, string, unknown, string][] = [
      ['POST', '/applications', privateApp, 'application:create'],
      ['PUT', `/applications/${target.id}`, { name: 'x' }, 'application:update'],
      ['POST', `/applications/${target.id}/regenerate`, undefined, 'application:update'],
      ['DELETE', `/applications/${target.id}`, undefined, 'application:delete'],
    ];
    for (const [method, path, body, permission] of endpoints) {
      expect((await emu.call(method, path, { body, key: null })).status).toBe(401);
      expect((await emu.call(method, path, { body, key: 'key_local_mgt_doesnotexist000000000' })).status).toBe(401);
      const forbidden = await emu.call(method, path, { body, key: readOnly });
      expect(forbidden.status, `${method} ${path}`).toBe(403);
      expect(forbidden.body.detail).toContain(permission);
    }
    for (const path of ['/applications', `/applications/${target.id}`, '/applications/key']) {
      expect((await emu.call('GET', path, { key: null })).status).toBe(401);
      expect((await emu.call('GET', path, { key: emu.privateKey })).status).toBe(403);
      expect((await emu.call('GET', path, { key: readOnly })).status).toBe(200);
    }
  });

  it('does not answer with a stack trace or key material in a 401', async () => {
    const emu = await startEmulator({ inMemory: true });
    const result = await http(`${emu.url}/applications`, 'GET', { key: 'key_local_mgt_wrongwrongwrongwrong00' });
    expect(result.status).toBe(401);
    expect(result.text).not.toContain('wrongwrong');
    expect(result.text).not.toMatch(/\n\s+at /);
  });
});
