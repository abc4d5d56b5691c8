/**
 * Tenants made without the HTTP route: `emulator.tenants.create` in process, and the client's
 * `createTenant` over the loopback admin route.
 */
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/client/index.js';
import { createEmulator, EmulatorError } from '../../src/emulator/index.js';
import { startEmulator } from '../helpers/emulator.js';

describe('emulator.tenants.create', () => {
  it('makes a tenant whose keys work at once, apart from the others', async () => {
    const emu = await startEmulator({ inMemory: true });
    const tenant = await emu.emulator.tenants.create({ name: 'acme' });
    expect(tenant).toMatchObject({ name: 'acme', id: expect.any(String) });
    expect(tenant.id).not.toBe(emu.tenantId);
    const own = await emu.call('GET', '/applications', { key: tenant.management_key });
    expect(own.status).toBe(200);
    expect(own.body.data).toHaveLength(2);
    const bootstrap = await emu.call('GET', '/applications');
    expect(bootstrap.body.data.map((app: { id: string }) => app.id)).not.toContain(own.body.data[0].id);
  });

  it('takes the keys given, and refuses a spec the route would refuse, naming the field', async () => {
    const emu = await startEmulator({ inMemory: true });
    const managementKey = 'acme-management-key-0001';
    const tenant = await emu.emulator.tenants.create({ managementKey, privateKey: 'acme-private-key-00000001' });
    expect(tenant.management_key).toBe(managementKey);
    expect((await emu.call('GET', '/applications', { key: managementKey })).status).toBe(200);

    const refused = (spec: object) => emu.emulator.tenants.create(spec).catch((error: unknown) => error);
    const short = await refused({ managementKey: 'short' });
    expect(short).toBeInstanceOf(EmulatorError);
    expect((short as EmulatorError).message).toMatch(/^spec\.managementKey must be 16 to 256 characters/);
    expect((short as EmulatorError).option).toBe('managementKey');
    const same = await refused({ managementKey: 'same-key-0000000001', privateKey: 'same-key-0000000001' });
    expect((same as EmulatorError).message).toBe('spec.privateKey must differ from spec.managementKey.');
    const taken = await refused({ managementKey });
    expect(taken).toBeInstanceOf(EmulatorError);
    expect((taken as EmulatorError).message).toMatch(/key/i);
  });

  it('waits for the start, and refuses once the emulator is stopped', async () => {
    const emulator = createEmulator({ inMemory: true, port: 0 });
    const made = emulator.tenants.create({ name: 'early' });
    await emulator.ready;
    expect((await made).name).toBe('early');
    await emulator.dispose();
    const late = await emulator.tenants.create().catch((error: unknown) => error);
    expect(late).toBeInstanceOf(EmulatorError);
    expect((late as EmulatorError).message).toBe('The emulator is stopped: no tenant can be made.');
  });
});

describe('ApiClient.createTenant', () => {
  it('makes a tenant over the loopback admin route, with no key', async () => {
    const emu = await startEmulator({ inMemory: true });
    const client = new ApiClient({ baseUrl: emu.url });
    const tenant = await client.createTenant({ name: 'over http' });
    expect(tenant.name).toBe('over http');
    const scoped = new ApiClient({ baseUrl: emu.url, managementKey: tenant.management_key });
    expect((await scoped.applications.list()).data).toHaveLength(2);
  });
});
