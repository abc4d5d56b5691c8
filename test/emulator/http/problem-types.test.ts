import { describe, expect, it } from 'vitest';
import { PROBLEM_TYPES } from '../../../src/api/problem.js';
import { createApplication, sharedEmulator, startEmulator, unique } from '../../helpers/emulator.js';

/** Programs tell problems apart by `type` (a stable URN), never by the title, which is prose. */
describe('problem types', () => {
  const emu = sharedEmulator();

  const reactor = async (code: string) => {
    const created = await emu().call('POST', '/reactors', { body: { name: unique('r'), code, configuration: {} } });
    expect(created.status, created.text).toBe(201);
    return created.body.id as string;
  };

  it('a body with invalid fields is `validation`; a bad request otherwise is `bad-request`', async () => {
    const invalid = await emu().call('POST', '/applications', { body: { name: '', type: 'private' } });
    expect(invalid.body).toMatchObject({
      status: 400,
      type: PROBLEM_TYPES.validation,
      errors: { name: expect.any(Array) },
    });
    const malformed = await emu().call('POST', '/applications', { raw: '{"name":', contentType: 'application/json' });
    expect(malformed.body).toMatchObject({ status: 400, type: PROBLEM_TYPES.badRequest, title: 'Malformed JSON' });
  });

  it('tells unauthenticated, forbidden and not-found apart', async () => {
    expect((await emu().call('GET', '/applications', { key: null })).body).toMatchObject({
      status: 401,
      type: PROBLEM_TYPES.unauthenticated,
    });
    expect((await emu().call('GET', '/applications', { key: emu().privateKey })).body).toMatchObject({
      status: 403,
      type: PROBLEM_TYPES.forbidden,
    });
    const missing = await emu().call('GET', '/applications/00000000-0000-4000-8000-000000000000');
    expect(missing.body).toMatchObject({ status: 404, type: PROBLEM_TYPES.notFound });
  });

  it('a transaction that is not open is a `conflict`', async () => {
    const opened = await emu().call('POST', '/transactions', { key: emu().privateKey });
    await emu().call('POST', `/transactions/${opened.body.id}/commit`, { key: emu().privateKey });
    const again = await emu().call('POST', `/transactions/${opened.body.id}/commit`, { key: emu().privateKey });
    expect(again.body).toMatchObject({ status: 409, type: PROBLEM_TYPES.conflict });
  });

  it('a body over the limit is `payload-too-large`', async () => {
    const big = await emu().call('POST', '/tokens', {
      key: emu().privateKey,
      raw: `{"type":"token","data":"${'x'.repeat(5 * 1024 * 1024)}"}`,
      contentType: 'application/json',
    });
    expect(big.body).toMatchObject({ status: 413, type: PROBLEM_TYPES.payloadTooLarge });
  });

  it('what user code throws is `user-code` whatever its status, and a reactor that does not load too', async () => {
    const throwing = await reactor("module.exports = async () => { throw new Error('boom'); };");
    const thrown = await emu().call('POST', `/reactors/${throwing}/react`, { key: emu().privateKey, body: {} });
    expect(thrown.body).toMatchObject({ status: 500, type: PROBLEM_TYPES.userCode });
    // A platform error class of user code carries its status, not the caller's: still user-code, not forbidden.
    const refusing = await reactor("module.exports = async () => { throw new AuthorizationError('no'); };");
    const refused = await emu().call('POST', `/reactors/${refusing}/react`, { key: emu().privateKey, body: {} });
    expect(refused.body).toMatchObject({ status: 403, type: PROBLEM_TYPES.userCode });
    const broken = await emu().call('POST', '/reactors', {
      body: { name: unique('r'), code: 'module.exports = (', configuration: {} },
    });
    expect(broken.body).toMatchObject({ status: 422, type: PROBLEM_TYPES.userCode });
  });

  it('a destination that cannot be reached is `bad-gateway`', async () => {
    const app = await createApplication(emu(), { type: 'private', permissions: ['token:use'] });
    const proxy = await emu().call('POST', '/proxies', {
      body: { name: unique('p'), destination_url: 'http://127.0.0.1:1' },
    });
    const answer = await emu().call('POST', '/proxy', {
      key: app.key,
      headers: { 'svc-proxy-key': proxy.body.key },
      body: {},
    });
    expect(answer.body.proxy_error).toMatchObject({ status: 502, type: PROBLEM_TYPES.badGateway });
  });
});

describe('problem types of the tiers and of time', () => {
  it('an Enterprise feature on the standard tier is `tier-required`, not `forbidden`', async () => {
    const emu = await startEmulator({ inMemory: true, tier: 'standard' });
    const refused = await emu.call('POST', '/transactions', { key: emu.privateKey });
    expect(refused.body).toMatchObject({ status: 403, type: PROBLEM_TYPES.tierRequired });
    // The emulator names no flag of the CLI's.
    expect(refused.body.detail).not.toMatch(/--/);
  });

  it('user code that runs past its timeout is `timeout`', async () => {
    const emu = await startEmulator({ inMemory: true, syncTimeoutMs: 300 });
    const created = await emu.call('POST', '/reactors', {
      body: { name: 'slow', code: 'module.exports = () => new Promise(() => {});', configuration: {} },
    });
    const answer = await emu.call('POST', `/reactors/${created.body.id}/react`, { key: emu.privateKey, body: {} });
    expect(answer.body).toMatchObject({ status: 408, type: PROBLEM_TYPES.timeout });
  });
});
