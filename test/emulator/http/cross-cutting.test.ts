import { packageVersion } from '../../../src/lib/package-version.js';
import { describe, expect, it } from 'vitest';
import { http, startEmulator } from '../../helpers/emulator.js';

describe('problem+json, limits and tracing', () => {
  it('answers GET /health without a key', async () => {
    const emu = await startEmulator({ inMemory: true });
    const result = await http(`${emu.url}/health`, 'GET');
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ status: 'ok', version: packageVersion() });
  });

  it('echoes a given SVC-TRACE-ID and generates one otherwise, on success and error', async () => {
    const emu = await startEmulator({ inMemory: true });
    const given = await emu.call('GET', '/applications', { headers: { 'svc-trace-id': 'ci-run-42.step:1' } });
    expect(given.headers['svc-trace-id']).toBe('ci-run-42.step:1');
    const generated = await emu.call('GET', '/applications');
    expect(generated.headers['svc-trace-id']).toMatch(/^[0-9a-f-]{36}$/);
    const failed = await emu.call('GET', '/applications', { key: null, headers: { 'svc-trace-id': 'abc' } });
    expect(failed.headers['svc-trace-id']).toBe('abc');
    expect(failed.body.trace_id).toBe('abc');
    // an implausible id (spaces, too long) is replaced rather than echoed into logs
    const odd = await emu.call('GET', '/health', { headers: { 'svc-trace-id': 'x'.repeat(300) } });
    expect(odd.headers['svc-trace-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('logs one event per request with method, path, status, ms and trace id, never a key or query', async () => {
    const emu = await startEmulator({ inMemory: true });
    await emu.call('GET', '/applications?svc-proxy-key=secret-proxy-key', { headers: { 'svc-trace-id': 't-1' } });
    const event = emu.events.find((e) => e.type === 'request' && e.traceId === 't-1');
    expect(event).toMatchObject({ type: 'request', method: 'GET', path: '/applications', status: 200, traceId: 't-1' });
    expect(typeof (event as { ms: number }).ms).toBe('number');
    const all = JSON.stringify(emu.events);
    expect(all).not.toContain(emu.managementKey);
    expect(all).not.toContain('secret-proxy-key');
  });

  it('answers malformed JSON with 400', async () => {
    const emu = await startEmulator({ inMemory: true });
    const result = await emu.call('POST', '/applications', { raw: '{"name": "x",', contentType: 'application/json' });
    expect(result.status).toBe(400);
    expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(result.body).toMatchObject({ status: 400, title: 'Malformed JSON' });
    expect(result.body.detail).toMatch(/not valid JSON/);
  });

  it('answers a JSON body that is not an object with 400', async () => {
    const emu = await startEmulator({ inMemory: true });
    for (const raw of ['[]', '"text"', '42', 'null']) {
      const result = await emu.call('POST', '/applications', { raw, contentType: 'application/json' });
      expect(result.status, raw).toBe(400);
      expect(result.body.errors, raw).toBeDefined();
    }
  });

  it('answers a body over 5 MB with 413', async () => {
    const emu = await startEmulator({ inMemory: true });
    const raw = JSON.stringify({
      name: 'x',
      type: 'private',
      permissions: ['token:read'],
      pad: 'y'.repeat(5 * 1024 * 1024),
    });
    const result = await emu.call('POST', '/applications', { raw, contentType: 'application/json' });
    expect(result.status).toBe(413);
    expect(result.body).toMatchObject({ status: 413, type: 'urn:svc:problem:payload-too-large' });
  });

  it('answers a body that is not JSON with 415', async () => {
    const emu = await startEmulator({ inMemory: true });
    const result = await emu.call('POST', '/applications', {
      raw: 'name=x',
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(result.status).toBe(415);
    expect(result.body.detail).toContain('application/x-www-form-urlencoded');
  });

  it('answers unknown routes with a 404 problem', async () => {
    const emu = await startEmulator({ inMemory: true });
    const result = await emu.call('GET', '/nothing/here?x=1');
    expect(result.status).toBe(404);
    expect(result.body).toMatchObject({ status: 404, detail: 'No route GET /nothing/here.' });
    expect(result.body.trace_id).toBe(result.headers['svc-trace-id']);
  });
});
