import { BasisTheory } from '@basis-theory/basis-theory-js';
import { describe, expect, it } from 'vitest';
import { createApplication, sharedEmulator, unique } from '../../helpers/emulator.js';

/**
 * The platform's published JS client (`@basis-theory/basis-theory-js`, also the client the platform
 * injects into reactors) driven through its main calls against a real emulator. Its key header name
 * (`BT-API-KEY`) is fixed in its source; its per-call `headers` option (read by every call, though its
 * types name only `apiKey`, `correlationId` and `idempotencyKey`) sends `SVC-API-KEY` beside it. Its base
 * URL is `localhost`: any other host it turns to https.
 */
describe('the vendor JS SDK against the emulator', () => {
  const emu = sharedEmulator();
  const client = () => new BasisTheory().init('unused', { apiBaseUrl: emu().url.replace('127.0.0.1', 'localhost') });
  /** The SDK's request options with the emulator's key header. */
  const as = (key: string) => ({ headers: { 'SVC-API-KEY': key } }) as { apiKey?: string };

  it('manages Applications: create and list at /applications/, retrieve, update, regenerate (empty body), delete', async () => {
    const bt = await client();
    const management = as(emu().managementKey);
    const name = unique('sdk');
    const created = await bt.applications.create({ name, type: 'private', permissions: ['token:read'] }, management);
    expect(created).toMatchObject({ name, type: 'private', tenantId: emu().tenantId, key: expect.any(String) });

    const listed = await bt.applications.list({ size: 100 }, management);
    expect(listed.pagination).toMatchObject({ pageNumber: 1, pageSize: 100 });
    expect(listed.data.map((app) => app.id)).toContain(created.id);

    expect(await bt.applications.retrieve(created.id, management)).toMatchObject({ id: created.id, name });
    const updated = await bt.applications.update(
      created.id,
      { name: `${name}-2`, permissions: ['token:read', 'token:create'] },
      management,
    );
    expect(updated).toMatchObject({ name: `${name}-2`, permissions: ['token:read', 'token:create'] });

    const regenerated = await bt.applications.regenerateKey(created.id, management);
    expect(regenerated.key).toEqual(expect.any(String));
    expect(regenerated.key).not.toBe(created.key);

    await bt.applications.delete(created.id, management);
    const gone = await bt.applications.retrieve(created.id, management).catch((error: unknown) => error);
    expect(gone).toMatchObject({ name: 'BasisTheoryApiError', status: 404, data: { status: 404 } });
  });

  it('makes, reads, lists and deletes tokens with camelCase fields, and tokenizes', async () => {
    const bt = await client();
    const app = await createApplication(emu(), {
      name: unique('sdk-tokens'),
      type: 'private',
      permissions: ['token:create', 'token:read', 'token:delete'],
    });
    const key = as(app.key);
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const year = new Date().getUTCFullYear() + 2;
    const token = await bt.tokens.create(
      {
        type: 'card',
        data: { number: '4242424242424242', expiration_month: 12, expiration_year: year },
        metadata: { orderId: 'o-1' },
        expiresAt,
      },
      key,
    );
    expect(token).toMatchObject({
      type: 'card',
      metadata: { orderId: 'o-1' },
      expiresAt,
      createdAt: expect.any(String),
    });

    expect(await bt.tokens.retrieve(token.id, key)).toMatchObject({ id: token.id, type: 'card' });
    const listed = await bt.tokens.list({ size: 100 }, key);
    expect(listed.data.map((one) => one.id)).toContain(token.id);

    const tokenized = (await bt.tokenize({ first: { type: 'token', data: 'plain' } }, key)) as {
      first: { id: string };
    };
    expect(tokenized.first.id).toEqual(expect.any(String));

    await bt.tokens.delete(token.id, key);
    const gone = await bt.tokens.retrieve(token.id, key).catch((error: unknown) => error);
    expect(gone).toMatchObject({ name: 'BasisTheoryApiError', status: 404 });
  });

  it('creates a reactor and invokes it', async () => {
    const bt = await client();
    const management = as(emu().managementKey);
    const reactor = await bt.reactors.create(
      {
        name: unique('sdk-reactor'),
        code: 'module.exports = async (req) => ({ raw: { echoed: req.args.word } });',
        configuration: {},
      },
      management,
    );
    const answer = await bt.reactors.react(reactor.id, { args: { word: 'hello' } }, as(emu().privateKey));
    expect(answer.raw).toEqual({ echoed: 'hello' });
  });
});
