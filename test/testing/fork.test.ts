import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/client/index.js';
import type { EmulatorEvent } from '../../src/api/events.js';
import { createEmulator, EmulatorError, type Emulator } from '../../src/emulator/index.js';
import { startReceiver } from '../helpers/receiver.js';

const CODE =
  'let calls = 0;\nmodule.exports = async (req) => ({ raw: { calls: ++calls, key: req.configuration.KEY } });\n';

/** emulator.tenants.fork and delete, beneath svc/testing. */
describe('emulator.tenants.fork', () => {
  let emulator: Emulator;
  let url: string;
  let template: Awaited<ReturnType<Emulator['tenants']['create']>>;
  let templateClient: ApiClient;

  beforeAll(async () => {
    emulator = createEmulator({ inMemory: true, port: 0, host: '127.0.0.1' });
    ({ url } = await emulator.ready);
    template = await emulator.tenants.create({ name: 'template' });
    templateClient = new ApiClient({
      baseUrl: url,
      managementKey: template.management_key,
      apiKey: template.private_key,
    });
    const backend = await templateClient.applications.create({
      name: 'backend',
      type: 'private',
      permissions: ['token:create', 'token:use'],
    });
    await templateClient.reactors.create({
      name: 'count',
      code: CODE,
      configuration: { KEY: 'v1' },
      application: { id: backend.id },
    });
    await templateClient.proxies.create({
      name: 'out',
      destination_url: 'http://127.0.0.1:9/',
      configuration: { TOKEN: 't' },
      application: { id: backend.id },
    });
  });

  afterAll(async () => {
    await emulator?.dispose();
  });

  it('copies Applications, reactors and proxies with ids and keys of their own, bound to the copies', async () => {
    const fork = await emulator.tenants.fork(template.id, { name: 'a test' });
    expect(fork.id).not.toBe(template.id);
    expect(fork.name).toBe('a test');
    expect(fork.applications.map((app) => app.name).sort()).toEqual(['backend', 'svc management', 'svc private']);
    const client = new ApiClient({ baseUrl: url, managementKey: fork.management_key, apiKey: fork.private_key });
    expect((await client.applications.self()).tenant_id).toBe(fork.id);
    const backend = fork.applications.find((app) => app.name === 'backend')!;
    const [reactor] = await client.reactors.all();
    expect(reactor).toMatchObject({ id: fork.reactors[0]!.id, name: 'count', configuration: { KEY: 'v1' } });
    expect(reactor!.application?.id).toBe(backend.id);
    const [proxy] = await client.proxies.all();
    const [templateProxy] = await templateClient.proxies.all();
    expect(proxy).toMatchObject({ name: 'out', application_id: backend.id, configuration: { TOKEN: 't' } });
    expect(proxy!.key).toBe(fork.proxies[0]!.key);
    expect(proxy!.key).not.toBe(templateProxy!.key);
    // Each Application's key opens the fork's Application, never the template's: what it makes is the fork's.
    const backendClient = new ApiClient({ baseUrl: url, apiKey: backend.key });
    const made = await backendClient.tokens.create({ type: 'token', data: 'made with the copy' });
    expect((await client.tokens.get(made.id)).id).toBe(made.id);
    await expect(templateClient.tokens.get(made.id)).rejects.toMatchObject({ status: 404 });
    await emulator.tenants.delete(fork.id);
  });

  it("runs a fork's code with module state of its own, and none of the template's tokens", async () => {
    const token = await templateClient.tokens.create({ type: 'token', data: 'template secret' });
    const fork = await emulator.tenants.fork(template.id);
    const client = new ApiClient({ baseUrl: url, managementKey: fork.management_key, apiKey: fork.private_key });
    await expect(client.tokens.get(token.id)).rejects.toMatchObject({ status: 404 });
    const react = () => client.reactors.invoke(fork.reactors[0]!.id, { args: {} });
    expect(await react()).toMatchObject({ raw: { calls: 1, key: 'v1' } });
    expect(await react()).toMatchObject({ raw: { calls: 2 } });
    await emulator.tenants.delete(fork.id);
  });

  it('deletes a tenant and all it holds; a second delete finds nothing', async () => {
    const fork = await emulator.tenants.fork(template.id);
    const client = new ApiClient({ baseUrl: url, managementKey: fork.management_key, apiKey: fork.private_key });
    await client.tokens.create({ type: 'token', data: 'x' });
    expect(await emulator.tenants.delete(fork.id)).toBe(true);
    expect(await emulator.tenants.delete(fork.id)).toBe(false);
    await expect(client.applications.self()).rejects.toMatchObject({ status: 401 });
    // The template serves on.
    expect((await templateClient.reactors.all()).map((reactor) => reactor.name)).toEqual(['count']);
  });

  it('refuses a template that does not exist, as an EmulatorError', async () => {
    await expect(emulator.tenants.fork('00000000-0000-4000-8000-000000000000')).rejects.toBeInstanceOf(EmulatorError);
  });

  it('settles at once a tenant with nothing under way', async () => {
    const fork = await emulator.tenants.fork(template.id);
    await emulator.tenants.settled(fork.id);
    expect(await emulator.tenants.webhookSecret(fork.id)).toMatch(/^whsec_/);
    expect(await emulator.tenants.webhookSecret(fork.id)).not.toBe(await emulator.tenants.webhookSecret(template.id));
    await emulator.tenants.delete(fork.id);
  });
});

describe('emulator.tenants.delete, with webhook deliveries under way', () => {
  let emulator: Emulator;
  let url: string;
  let templateId: string;
  const events: EmulatorEvent[] = [];

  beforeAll(async () => {
    // Retries an hour apart and attempts that may take a minute: neither ends by itself while a test runs.
    emulator = createEmulator({
      inMemory: true,
      port: 0,
      host: '127.0.0.1',
      tier: 'enterprise',
      webhooks: { attempts: 4, retryBaseMs: 3_600_000, attemptTimeoutMs: 60_000 },
    });
    ({ url } = await emulator.ready);
    emulator.events.subscribe((event) => events.push(event));
    const template = await emulator.tenants.create({ name: 'template' });
    templateId = template.id;
    const client = new ApiClient({ baseUrl: url, managementKey: template.management_key });
    await client.reactors.create({
      name: 'quick',
      code: 'module.exports = async () => ({ raw: 1 });\n',
      configuration: {},
    });
  });

  afterAll(async () => {
    await emulator?.dispose();
  });

  /** A fork whose reactor was invoked asynchronously towards `callbackUrl`. */
  async function invokedFork(callbackUrl: string) {
    const fork = await emulator.tenants.fork(templateId);
    const answer = await fetch(`${url}/reactors/${fork.reactors[0]!.id}/react`, {
      method: 'POST',
      headers: { 'svc-api-key': fork.private_key, 'content-type': 'application/json' },
      body: JSON.stringify({ args: {}, callback_url: callbackUrl }),
    });
    expect(answer.status).toBe(202);
    return fork;
  }

  const webhookEvents = (tenantId: string) =>
    events.filter((event) => event.type === 'webhook' && 'tenantId' in event && event.tenantId === tenantId);

  it('ends a retry waiting for its time: settled resolves, and nothing of the tenant is sent or written after', async () => {
    const receiver = await startReceiver(() => 500);
    const fork = await invokedFork(receiver.url);
    await receiver.waitFor(1);
    // The failed attempt recorded (its event follows the write): the retry now waits an hour.
    await expect.poll(() => webhookEvents(fork.id).length, { timeout: 10_000 }).toBe(1);
    expect(await emulator.tenants.delete(fork.id)).toBe(true);
    await emulator.tenants.settled(fork.id);
    expect(receiver.received).toHaveLength(1);
    expect(webhookEvents(fork.id)).toHaveLength(1);
  });

  it('aborts an attempt in flight, and writes no result back for a tenant that is gone', async () => {
    const receiver = await startReceiver(() => 'hang');
    const fork = await invokedFork(receiver.url);
    await receiver.waitFor(1);
    expect(await emulator.tenants.delete(fork.id)).toBe(true);
    await emulator.tenants.settled(fork.id);
    // The aborted attempt is no attempt: no event (each follows its write) and no error of the delivery.
    expect(webhookEvents(fork.id)).toEqual([]);
    expect(events.filter((event) => event.type === 'error')).toEqual([]);
    expect(receiver.received).toHaveLength(1);
  });
});
