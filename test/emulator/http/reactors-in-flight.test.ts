/**
 * What changes under a call in flight takes effect at once: an Application deleted or narrowed
 * while its reactor runs, the reactor itself deleted; and `req.svc` held to the limits of the API.
 */
import { describe, expect, it } from 'vitest';
import type { EmulatorEvent } from '../../../src/emulator/index.js';
import { createApplication, sharedEmulator, unique, type TestEmulator } from '../../helpers/emulator.js';
import { eventually } from '../../helpers/wait.js';

/** Code that says `ready` on the console, waits for `req.args.ms`, then runs `req.args.step` of req.svc. */
const WAITER = `module.exports = async function (req) {
  console.log('ready ' + req.args.tag);
  await new Promise((resolve) => setTimeout(resolve, req.args.ms));
  try {
    const made = await req.svc.tokens.create({ type: 'token', data: req.args.data ?? 'made late' });
    return { raw: { created: made.id } };
  } catch (error) {
    return { raw: { refused: error.name, status: error.status, message: error.data.detail } };
  }
};`;

async function reactorFor(emu: TestEmulator, code: string, applicationId?: string): Promise<string> {
  const created = await emu.call('POST', '/reactors', {
    body: {
      name: unique('reactor'),
      code,
      configuration: {},
      ...(applicationId && { application: { id: applicationId } }),
    },
  });
  expect(created.status, created.text).toBe(201);
  return created.body.id;
}

/** Waits for the console line `ready <tag>` of a call under way. */
function ready(emu: TestEmulator, tag: string): Promise<unknown> {
  return eventually(() => {
    const line = emu.events.find(
      (event: EmulatorEvent) => event.type === 'console' && (event as { text?: string }).text === `ready ${tag}`,
    );
    expect(line).toBeDefined();
    return line;
  }, 15_000);
}

describe('a call in flight', () => {
  const emu = sharedEmulator();

  it('loses the grants of its Application once the Application is deleted (req.svc checks it on every call)', async () => {
    const bound = await createApplication(emu(), { type: 'private', permissions: ['token:create'] });
    const reactor = await reactorFor(emu(), WAITER, bound.id);
    const tag = unique('deleted');
    const call = emu().call('POST', `/reactors/${reactor}/react`, {
      key: emu().privateKey,
      body: { args: { tag, ms: 300 } },
    });
    await ready(emu(), tag);
    expect((await emu().call('DELETE', `/applications/${bound.id}`)).status).toBe(204);
    const answer = await call;
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.raw).toMatchObject({ refused: 'SvcApiError', status: 403 });
    expect(answer.body.raw.message).toMatch(/The Application bound to reactor .* was deleted/);
  });

  it('is held to the new permissions of its Application once they change', async () => {
    const bound = await createApplication(emu(), { type: 'private', permissions: ['token:create'] });
    const reactor = await reactorFor(emu(), WAITER, bound.id);
    const tag = unique('narrowed');
    const call = emu().call('POST', `/reactors/${reactor}/react`, {
      key: emu().privateKey,
      body: { args: { tag, ms: 300 } },
    });
    await ready(emu(), tag);
    const narrowed = await emu().call('PUT', `/applications/${bound.id}`, {
      body: { name: bound.name, permissions: ['token:read'] },
    });
    expect(narrowed.status, narrowed.text).toBe(200);
    const answer = await call;
    expect(answer.body.raw).toMatchObject({ refused: 'SvcApiError', status: 403 });
  });

  it('ends with a problem naming the deletion when its reactor is deleted, and the delete does not wait', async () => {
    const reactor = await reactorFor(emu(), WAITER);
    const tag = unique('gone');
    const call = emu().call('POST', `/reactors/${reactor}/react`, {
      key: emu().privateKey,
      body: { args: { tag, ms: 25_000 } },
    });
    await ready(emu(), tag);
    const deleted = await emu().call('DELETE', `/reactors/${reactor}`);
    expect(deleted.status).toBe(204);
    const answer = await call;
    expect(answer.status, answer.text).toBe(409);
    expect(answer.body.detail).toMatch(/^Reactor reactor-\w+ was deleted while this call ran; the call was stopped\.$/);
  });

  it('refuses a req.svc request over the 5 MB limit of the API, as the HTTP API would (413)', async () => {
    const bound = await createApplication(emu(), { type: 'private', permissions: ['token:create'] });
    // 6 MB of data, made inside the sandbox: nothing the caller sent was large.
    const maker = await reactorFor(
      emu(),
      `module.exports = async (req) => {
        try { await req.svc.tokens.create({ type: 'token', data: 'x'.repeat(6 * 1024 * 1024) }); return { raw: 'created' }; }
        catch (error) { return { raw: { status: error.status, message: error.data.detail } }; }
      };`,
      bound.id,
    );
    const refused = await emu().call('POST', `/reactors/${maker}/react`, { key: emu().privateKey, body: { args: {} } });
    expect(refused.status, refused.text).toBe(200);
    expect(refused.body.raw.message).toMatch(/over the 5 MB limit of a request/);
  });
});
