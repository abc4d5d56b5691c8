import path from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { createEmulator } from '../../../src/emulator/index.js';
import { routes } from '../../../src/emulator/http/routes/index.js';
import { nodeFileSystem } from '../../../src/lib/durable-file.js';
import { packageVersion } from '../../../src/lib/package-version.js';
import { sharedEmulator } from '../../helpers/emulator.js';
import { tempDir } from '../../helpers/temp.js';
import { eventually } from '../../helpers/wait.js';

const NO_REACTOR = '00000000-0000-4000-8000-000000000000';
const TRACE = 'routes-test-trace';

describe('the route table', () => {
  it('declares each method and path once, each with a summary', () => {
    const seen = new Set<string>();
    for (const route of routes) {
      expect(route.summary.length, route.path).toBeGreaterThan(0);
      for (const method of typeof route.method === 'string' ? [route.method] : route.method) {
        const key = `${method} ${route.path}`;
        expect(seen.has(key), key).toBe(false);
        seen.add(key);
      }
    }
    expect(seen.has('POST /reactors/:id/react')).toBe(true);
    expect(seen.has('DELETE /proxy/*')).toBe(true);
  });
});

describe('the one path', () => {
  const emu = sharedEmulator({ inMemory: true });

  it('answers /health with 200 {"status":"ok","version":…}, trace id echoed, and its log line', async () => {
    const before = emu().events.length;
    const response = await request(`${emu().url}/health`, { headers: { 'svc-trace-id': TRACE } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.headers['svc-trace-id']).toBe(TRACE);
    expect(await response.body.json()).toEqual({ status: 'ok', version: packageVersion() });
    await eventually(() =>
      expect(emu().events.slice(before)).toContainEqual(
        expect.objectContaining({ type: 'request', method: 'GET', path: '/health', status: 200, traceId: TRACE }),
      ),
    );
  });

  it('answers HEAD on a GET route with its headers and no body', async () => {
    const response = await request(`${emu().url}/health`, { method: 'HEAD' });
    expect(response.statusCode).toBe(200);
    expect(Number(response.headers['content-length'])).toBeGreaterThan(0);
    expect(await response.body.text()).toBe('');
  });

  it.each([
    ['OPTIONS', '/health', 404],
    ['OPTIONS', '/tokens/%zz', 400],
    ['PROPFIND', '/tokens/%zz', 400],
    // One trailing slash names the route (client-wire.test.ts); two do not.
    ['GET', '/health//', 404],
    ['GET', '//health', 404],
  ])('%s %s: %i', async (method, target, status) => {
    const response = await request(`${emu().url}${target}`, { method: method as never });
    expect(response.statusCode).toBe(status);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    await response.body.text();
  });
});

describe('while the emulator starts, every route answers 503', () => {
  it.each([
    ['GET', '/health', {}],
    ['GET', '/tokens/some-token', {}],
    ['GET', '/applications', {}],
    ['POST', '/tokens', { body: '{"type":"token","data":"v"}', headers: { 'content-type': 'application/json' } }],
    ['POST', `/reactors/${NO_REACTOR}/react`, { body: '{"args":{}}', headers: { 'content-type': 'application/json' } }],
    [
      'POST',
      '/proxy',
      { body: '{}', headers: { 'content-type': 'application/json', 'svc-proxy-key': 'proxy_local_unknownunknown1' } },
    ],
  ] as [string, string, { body?: string; headers?: Record<string, string> }][])(
    '%s %s',
    async (method, target, sent) => {
      // The store's writes wait until released: the bootstrap's write holds the start half-way.
      let release = () => {};
      const released = new Promise<void>((resolve) => (release = resolve));
      const fileSystem = {
        ...nodeFileSystem,
        writeNew: async (file: string, text: string) => {
          await released;
          await nodeFileSystem.writeNew(file, text);
        },
      };
      const emulator = createEmulator({ port: 0, data: path.join(await tempDir(), '.svc', 'data.json'), fileSystem });
      try {
        const url = await eventually(() => {
          expect(emulator.url).toBeDefined();
          return emulator.url!;
        });
        const response = await request(url + target, {
          method: method as never,
          headers: { 'svc-trace-id': TRACE, ...sent.headers },
          body: sent.body,
        });
        expect(response.statusCode).toBe(503);
        expect(response.headers['retry-after']).toBe('1');
        expect(response.headers['svc-trace-id']).toBe(TRACE);
        const body = (await response.body.json()) as Record<string, { title?: string }> & { title?: string };
        const problem = target === '/proxy' ? body.proxy_error! : body;
        expect(problem.title).toBe('Starting');
      } finally {
        release();
        await emulator.dispose();
      }
    },
  );
});
