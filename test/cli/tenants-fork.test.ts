import { describe, expect, test } from 'vitest';
import { expectOneLineError, fieldsOf, runSvc } from '../helpers/cli.js';
import { createTenant, sharedEmulator, unique } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

const emu = sharedEmulator();

async function svc(argv: string[], key = emu().managementKey) {
  return runSvc([...argv, '--base-url', emu().url, '--management-key', key], { cwd: await tempDir() });
}

describe('svc tenants fork', () => {
  test('forks the bootstrapped tenant by default and prints the keys once', async () => {
    const name = unique('fork');
    const forked = await svc(['tenants', 'fork', name]);
    expect(forked.code, forked.stderr).toBe(0);
    const fields = fieldsOf(forked.stdout);
    expect(fields).toMatchObject({ name, 'management key': expect.stringMatching(/^key_/) });
    expect(fields['forked from']).toContain(emu().tenantId);
    expect(forked.stdout).toMatch(/^COPIED\s+NAME\s+KEY$/m);
    expect(forked.stdout).toMatch(/application \(management\)\s+svc management\s+key_/);
    expect(forked.stderr).toContain('shown once');
    const self = await emu().call('GET', '/applications/key', { key: fields['management key']! });
    expect(self.body.tenant_id).toBe(fields.id);
  });

  test('--from names the template by name or id; --json is the route answer', async () => {
    const acme = await createTenant(emu(), unique('acme'));
    const reactor = await emu().call('POST', '/reactors', {
      key: acme.management_key,
      body: { name: 'charge', code: 'module.exports = async () => ({ raw: {} });', configuration: {} },
    });
    expect(reactor.status).toBe(201);
    const name = (await emu().call('GET', '/_emulator/tenants', { key: null })).body.data.find(
      (tenant: { id: string }) => tenant.id === acme.id,
    ).name;
    for (const from of [name, acme.id]) {
      const json = await svc(['tenants', 'fork', 'test', '--from', from, '--json'], acme.management_key);
      expect(json.code, json.stderr).toBe(0);
      const forked = json.json();
      expect(forked).toMatchObject({
        name: 'test',
        management_key: expect.any(String),
        private_key: expect.any(String),
      });
      expect(forked.reactors).toEqual([{ id: expect.any(String), name: 'charge' }]);
      expect(forked.applications.map((app: { name: string }) => app.name).sort()).toEqual([
        'svc management',
        'svc private',
      ]);
      expect(forked.id).not.toBe(acme.id);
    }
  });

  test('an unknown template, or a key that is not the template’s, is one line and exit 1', async () => {
    expectOneLineError(
      await svc(['tenants', 'fork', 'x', '--from', 'no-such-tenant']),
      1,
      /No tenant "no-such-tenant"/,
    );
    const acme = await createTenant(emu(), unique('acme'));
    const refused = await svc(['tenants', 'fork', 'x', '--from', acme.id]);
    expectOneLineError(refused, 1, /another tenant's/);
  });
});
