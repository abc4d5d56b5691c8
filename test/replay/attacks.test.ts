import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { runSvc } from '../helpers/cli.js';
import { createApplication, createTenant, createToken, sharedEmulator, unique } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { selfSigned } from '../helpers/tls.js';

const emu = sharedEmulator();
const SECRET = 'ssn-078-05-1120-private';

async function listen(server: Server): Promise<{ url: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** What `find` finds within a generous bound. */
async function waitFor<T>(find: () => T | undefined): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const found = find();
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('not found in time');
}

const replay = (traceId: string, key?: string) =>
  emu().call('POST', `/_emulator/replay/${traceId}`, { body: {}, ...(key && { key }) });

describe('svc replay attacks', () => {
  it('a call of another tenant under the same trace id, refused early, does not end the kept call', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const destination = await listen(
      createServer((request, response) => {
        request.resume();
        void gate.then(() => {
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end('{"ok":true}');
        });
      }),
    );
    const created = await emu().call('POST', '/proxies', {
      body: { name: unique('slow'), destination_url: destination.url, require_auth: false },
    });
    expect(created.status, created.text).toBe(201);
    const traceId = unique('order');
    const pending = emu().call('POST', '/proxy', {
      key: null,
      headers: { 'SVC-PROXY-KEY': created.body.key, 'SVC-TRACE-ID': traceId },
      body: { a: 1 },
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const other = await createTenant(emu(), unique('other'));
    const theirs = await emu().call('POST', '/proxy', {
      key: other.private_key,
      headers: { 'SVC-PROXY-KEY': 'no-such-proxy-key', 'SVC-TRACE-ID': traceId },
      body: {},
    });
    expect(theirs.status).toBe(404);
    release();
    expect((await pending).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const answer = await replay(traceId);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.text).not.toMatch(/No proxy has this key/);
    const kept = answer.body.stages.find((stage: { stage: string }) => stage.stage === 'answer');
    expect(kept.recorded).toMatchObject({ status: 200, body: { ok: true } });
    await destination.close();
  });

  it('a kept answer given its plaintext again is redacted in the re-run, whatever the code does now', async () => {
    const { key, cert } = await selfSigned();
    const server = createHttpsServer({ key, cert }, (request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ echoed: body }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const bound = await createApplication(emu(), { type: 'private', permissions: ['token:use'] });
    const code = (send: string) => `const https = require('node:https');
module.exports = async (req) => {
  ${send}
  const text = await new Promise((resolve, reject) => {
    const r = https.request({ hostname: '127.0.0.1', port: ${port}, path: '/echo', method: 'POST', ca: req.configuration.ca }, (res) => {
      let t = ''; res.on('data', (c) => (t += c)); res.on('end', () => resolve(t));
    });
    r.on('error', reject);
    r.end(sent);
  });
  return { raw: { answer: JSON.parse(text) } };
};`;
    const v1 = code(`const back = await req.svc.detokenize({ s: '{{ ' + req.args.id + ' }}' }); const sent = back.s;`);
    const v2 = code(`const sent = 'nothing';`);
    const name = unique('echo');
    const created = await emu().call('POST', '/reactors', {
      body: { name, code: v1, configuration: { ca: cert }, application: { id: bound.id } },
    });
    expect(created.status, created.text).toBe(201);
    const token = await createToken(emu(), { type: 'token', data: SECRET });
    const invoked = await emu().call('POST', `/reactors/${created.body.id}/react`, {
      key: emu().privateKey,
      body: { args: { id: token.id } },
    });
    expect(invoked.status, invoked.text).toBe(200);
    const traceId = String(invoked.headers['svc-trace-id']);
    const first = await replay(traceId);
    expect(first.status, first.text).toBe(200);
    expect(first.text).not.toContain(SECRET);
    const updated = await emu().call('PUT', `/reactors/${created.body.id}`, {
      body: { name, code: v2, configuration: { ca: cert }, application: { id: bound.id } },
    });
    expect(updated.status, updated.text).toBe(200);
    const second = await replay(traceId);
    expect(second.status, second.text).toBe(200);
    expect(second.text).not.toContain(SECRET);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('a proxy without transforms replays the same, its answer chunked, sized or gzip-encoded', async () => {
    const destination = await listen(
      createServer((request, response) => {
        request.resume();
        request.on('end', () => {
          const zipped = request.url === '/gzip';
          const body = zipped ? gzipSync(JSON.stringify({ zipped: true })) : Buffer.from('{"plain":true}');
          const sized = request.url === '/sized' || zipped;
          response.writeHead(200, {
            'content-type': 'application/json',
            ...(zipped && { 'content-encoding': 'gzip' }),
            ...(sized && { 'content-length': String(body.length) }),
          });
          response.end(body);
        });
      }),
    );
    const created = await emu().call('POST', '/proxies', {
      body: { name: unique('plain'), destination_url: destination.url, require_auth: false },
    });
    expect(created.status, created.text).toBe(201);
    for (const path of ['/chunked', '/sized', '/gzip']) {
      const called = await emu().call('POST', `/proxy${path}`, {
        key: null,
        headers: { 'SVC-PROXY-KEY': created.body.key },
        body: {},
      });
      expect(called.status, called.text).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const answer = await replay(String(called.headers['svc-trace-id']));
      expect(answer.status, answer.text).toBe(200);
      const differing = answer.body.stages.filter((stage: { same: boolean }) => !stage.same);
      expect(differing, path).toEqual([]);
    }
    await destination.close();
  });

  it("a proxy's configuration values are masked in what is kept, as a recording masks them", async () => {
    const destination = await listen(
      createServer((request, response) => {
        request.resume();
        request.on('end', () => {
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end('{}');
        });
      }),
    );
    const merchant = 'msk_live_9f8e7d6c5b4a3210';
    const created = await emu().call('POST', '/proxies', {
      body: {
        name: unique('conf'),
        destination_url: destination.url,
        require_auth: false,
        configuration: { merchant },
        request_transform: {
          code: 'module.exports = async (req) => ({ body: { merchant: req.configuration.merchant }, headers: { "content-type": "application/json", "x-merchant": req.configuration.merchant } });',
        },
      },
    });
    expect(created.status, created.text).toBe(201);
    const called = await emu().call('POST', '/proxy', {
      key: null,
      headers: { 'SVC-PROXY-KEY': created.body.key },
      body: {},
    });
    expect(called.status, called.text).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const answer = await replay(String(called.headers['svc-trace-id']));
    expect(answer.status, answer.text).toBe(200);
    expect(answer.text).not.toContain(merchant);
    await destination.close();
  });

  it('the CLI exits 2 on an error, apart from 1 (something differs): an unknown trace id, a server without the route', async () => {
    const run = async (line: string, base = emu().url) =>
      runSvc(line, { cwd: await tempDir(), env: { SVC_BASE_URL: base, SVC_MANAGEMENT_KEY: emu().managementKey } });
    const unknown = await run('replay no-such-trace');
    expect(unknown.code, unknown.stderr).toBe(2);
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
    const json = await run('replay no-such-trace --json');
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr).error.status).toBe(404);
    const bare = await listen(
      createServer((request, response) => {
        request.resume();
        response.writeHead(404, { 'content-type': 'text/plain' });
        response.end('not here');
      }),
    );
    const none = await run('replay some-trace', bare.url);
    expect(none.code, none.stderr).toBe(2);
    expect(none.stderr.trim().split('\n')).toHaveLength(1);
    expect(none.stderr).toMatch(/offers no replay/);
    const noneJson = await run('replay some-trace --json', bare.url);
    expect(noneJson.code).toBe(2);
    expect(JSON.parse(noneJson.stderr).error.exit_code).toBe(2);
    await bare.close();
  });

  it("an anonymous proxy's kept answer given its plaintext again is redacted in the re-run and its events", async () => {
    const destination = await listen(
      createServer((request, response) => {
        let body = '';
        request.on('data', (chunk) => (body += chunk));
        request.on('end', () => {
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ got: body }));
        });
      }),
    );
    const app = await createApplication(emu(), { type: 'private', permissions: ['token:use'] });
    const json = "headers: { 'content-type': 'application/json' }";
    // The request transform reveals the token itself (req.svc), then no longer does.
    const revealing = `module.exports = async (req) => { const d = await req.svc.detokenize({ s: '{{ ' + req.args.body.id + ' }}' }); return { body: { s: d.s }, ${json} }; };`;
    const plain = `module.exports = async (req) => ({ body: { s: 'none' }, ${json} });`;
    const response = `module.exports = async (req) => { console.log('saw', req.args.body.got); return { body: req.args.body, ${json} }; };`;
    const created = await emu().call('POST', '/proxies', {
      body: {
        name: unique('anon'),
        destination_url: destination.url,
        require_auth: false,
        application: { id: app.id },
        request_transform: { code: revealing },
        response_transform: { code: response },
      },
    });
    expect(created.status, created.text).toBe(201);
    const token = await createToken(emu(), { type: 'token', data: SECRET });
    const called = await emu().call('POST', '/proxy', {
      key: null,
      headers: { 'SVC-PROXY-KEY': created.body.key },
      body: { id: token.id },
    });
    expect(called.status, called.text).toBe(200);
    const patched = await emu().call('PATCH', `/proxies/${created.body.id}`, {
      raw: JSON.stringify({ request_transform: { code: plain } }),
      contentType: 'application/merge-patch+json',
    });
    expect(patched.status, patched.text).toBe(204);
    const before = emu().events.length;
    const answer = await replay(String(called.headers['svc-trace-id']));
    expect(answer.status, answer.text).toBe(200);
    expect(answer.text).not.toContain(SECRET);
    const replayed = answer.body.stages.find((stage: { stage: string }) => stage.stage === 'destination_answer');
    expect(JSON.stringify(replayed.replayed)).toContain(`{{ ${token.id} }}`);
    const line = await waitFor(() =>
      emu()
        .events.slice(before)
        .find((event) => event.type === 'console' && event.requestId === answer.body.replay_trace_id),
    );
    expect(JSON.stringify(line)).not.toContain(SECRET);
    await destination.close();
  });

  it('an expression a destination answered as text stays text in a re-run: only what the call revealed is given back', async () => {
    const { key, cert } = await selfSigned();
    const server = createHttpsServer({ key, cert }, (request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    // The code sends an expression as text (nothing detokenizes it) and looks at what comes back.
    const code = `const https = require('node:https');
module.exports = async (req) => {
  const text = await new Promise((resolve, reject) => {
    const r = https.request({ hostname: '127.0.0.1', port: ${port}, path: '/echo', method: 'POST', ca: req.configuration.ca }, (res) => {
      let t = ''; res.on('data', (c) => (t += c)); res.on('end', () => resolve(t));
    });
    r.on('error', reject);
    r.end('{{ ' + req.args.id + ' }}');
  });
  return { raw: { expression: text.startsWith('{{'), length: text.length } };
};`;
    const created = await emu().call('POST', '/reactors', {
      body: { name: unique('literal'), code, configuration: { ca: cert } },
    });
    expect(created.status, created.text).toBe(201);
    const token = await createToken(emu(), { type: 'token', data: SECRET });
    const invoked = await emu().call('POST', `/reactors/${created.body.id}/react`, {
      key: emu().privateKey,
      body: { args: { id: token.id } },
    });
    expect(invoked.status, invoked.text).toBe(200);
    expect(invoked.body.raw.expression).toBe(true);
    const answer = await replay(String(invoked.headers['svc-trace-id']));
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.same, answer.text).toBe(true);
    expect(answer.text).not.toContain(SECRET);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});

describe('svc replay with declared test card numbers', () => {
  const declared = sharedEmulator({ inMemory: true, leakGuardAllow: ['4242 4242 4242 4242'] });

  it('keeps a declared test card as it is (the re-run gets it), and masks any other', async () => {
    const code = 'module.exports = async (req) => ({ raw: { card: req.args.card, other: req.args.other } });';
    const created = await declared().call('POST', '/reactors', {
      body: { name: unique('cards'), code, configuration: {} },
    });
    expect(created.status, created.text).toBe(201);
    const invoked = await declared().call('POST', `/reactors/${created.body.id}/react`, {
      key: declared().privateKey,
      body: { args: { card: '4242424242424242', other: '4000056655665556' } },
    });
    expect(invoked.status, invoked.text).toBe(200);
    const answer = await declared().call('POST', `/_emulator/replay/${invoked.headers['svc-trace-id']}`, { body: {} });
    expect(answer.status, answer.text).toBe(200);
    const args = answer.body.stages.find((stage: { stage: string }) => stage.stage === 'args');
    expect(args.recorded).toEqual({ card: '4242424242424242', other: '[card ****5556]' });
    expect(answer.text).not.toContain('4000056655665556');
    expect(answer.body.same, answer.text).toBe(true);
  });
});
