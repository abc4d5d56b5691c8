import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runSvc } from '../helpers/cli.js';
import { createTenant, createToken, sharedEmulator, unique } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { selfSigned } from '../helpers/tls.js';

const CARD = '4242424242424242';
const emu = sharedEmulator();

/** A loopback destination that echoes what it got, as JSON; stopped with `close`. */
async function echoDestination(): Promise<{ url: string; close: () => Promise<void>; seen: string[] }> {
  const seen: string[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      seen.push(body);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ received: body ? JSON.parse(body) : null, path: request.url }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const REQUEST_TRANSFORM = `module.exports = async (req) => ({
  body: { card: req.args.body.card, amount: req.args.body.amount * 100 },
  headers: { 'Content-Type': 'application/json', 'X-Signed': 'yes' },
});`;
const responseTransform = (label: string) => `module.exports = async (req) => ({
  body: { ${label}: true, last4: String(req.args.body.received.card).slice(-4), path: req.args.body.path },
  headers: { 'Content-Type': 'application/json' },
});`;

async function proxyWithTransforms(destination: string) {
  const created = await emu().call('POST', '/proxies', {
    body: {
      name: unique('pay'),
      destination_url: destination,
      require_auth: true,
      request_transform: { code: REQUEST_TRANSFORM },
      response_transform: { code: responseTransform('ok') },
    },
  });
  expect(created.status, created.text).toBe(201);
  return created.body as { id: string; key: string };
}

async function callProxy(proxy: { key: string }, card: string): Promise<string> {
  const answer = await emu().call('POST', '/proxy/charge?currency=eur', {
    key: emu().privateKey,
    headers: { 'SVC-PROXY-KEY': proxy.key },
    body: { card: `{{ ${card} }}`, amount: 12 },
  });
  expect(answer.status, answer.text).toBe(200);
  return String(answer.headers['svc-trace-id']);
}

const svc = async (line: string) =>
  runSvc(line, {
    cwd: await tempDir(),
    env: { SVC_BASE_URL: emu().url, SVC_MANAGEMENT_KEY: emu().managementKey },
  });

describe('svc replay: a proxy with both transforms', () => {
  it('shows no difference for unchanged code, the diff once the response transform changed, and works from the recorded answer once the destination is gone', async () => {
    const destination = await echoDestination();
    const proxy = await proxyWithTransforms(destination.url);
    const card = await createToken(emu(), { type: 'token', data: CARD });
    const traceId = await callProxy(proxy, card.id);
    expect(destination.seen).toHaveLength(1);

    const same = await svc(`replay ${traceId}`);
    expect(same.code, same.stdout + same.stderr).toBe(0);
    expect(same.stdout).toMatch(/Nothing differs\./);
    expect(destination.seen).toHaveLength(1); // answered from the recorded answer

    const json = (await svc(`replay ${traceId} --json`)).json();
    expect(json.same).toBe(true);
    expect(json.stages.map((stage: { stage: string }) => stage.stage)).toEqual([
      'inbound',
      'request_transformed',
      'destination_request',
      'destination_answer',
      'response_transformed',
      'answer',
    ]);
    // No plaintext of the card anywhere in what was kept: its expression stands in its place.
    const text = JSON.stringify(json);
    expect(text).not.toContain(CARD);
    expect(text).toContain(`{{ ${card.id} }}`);

    const patched = await emu().call('PATCH', `/proxies/${proxy.id}`, {
      raw: JSON.stringify({ response_transform: { code: responseTransform('changed') } }),
      contentType: 'application/merge-patch+json',
    });
    expect(patched.status, patched.text).toBe(204);
    await destination.close();
    const differs = await svc(`replay ${traceId}`);
    expect(differs.code, differs.stderr).toBe(1);
    expect(differs.stdout).toMatch(/differs response_transformed/);
    expect(differs.stdout).toMatch(/^ {6}-\s+"ok": true,?$/m);
    expect(differs.stdout).toMatch(/^ {6}\+\s+"changed": true,?$/m);
    expect(differs.stdout).toMatch(/same {4}destination_answer/);

    // Live against the stopped destination: the request is sent, and the difference is its failure.
    const live = await svc(`replay ${traceId} --live --json`);
    expect(live.code).toBe(1);
    const stage = live.json().stages.find((s: { stage: string }) => s.stage === 'destination_answer');
    expect(stage.same).toBe(false);
    expect(JSON.stringify(stage.replayed)).toMatch(/error/);
  });

  it('--live sends the request to the running destination', async () => {
    const destination = await echoDestination();
    const proxy = await proxyWithTransforms(destination.url);
    const card = await createToken(emu(), { type: 'token', data: CARD });
    const traceId = await callProxy(proxy, card.id);
    const live = await svc(`replay ${traceId} --live`);
    expect(live.code, live.stdout + live.stderr).toBe(0);
    expect(destination.seen).toHaveLength(2);
    expect(destination.seen[1]).toContain(CARD); // detokenized again for the real destination
    await destination.close();
  });

  it('a call whose body was over the 64 KB kept is refused in one line, not re-run with its body cut', async () => {
    const destination = await echoDestination();
    const proxy = await proxyWithTransforms(destination.url);
    const answer = await emu().call('POST', '/proxy/charge', {
      key: emu().privateKey,
      headers: { 'SVC-PROXY-KEY': proxy.key },
      body: { card: 'none', amount: 1, pad: 'x'.repeat(70 * 1024) },
    });
    expect(answer.status, answer.text).toBe(200);
    const run = await svc(`replay ${String(answer.headers['svc-trace-id'])}`);
    expect(run.code, run.stdout + run.stderr).not.toBe(0);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/\(409\): Call .* sent a body over 64 KB/);
    expect(destination.seen).toHaveLength(1);
    await destination.close();
  });

  it('keeps no plaintext: the stored call holds the expression, not the card number', async () => {
    const destination = await echoDestination();
    const proxy = await proxyWithTransforms(destination.url);
    const card = await createToken(emu(), { type: 'token', data: CARD });
    const traceId = await callProxy(proxy, card.id);
    const replays = (emu().emulator as unknown as { replays?: unknown }).replays;
    expect(replays).toBeUndefined(); // not a public handle: the stored record is read through the route
    const answer = await emu().call('POST', `/_emulator/replay/${traceId}`, { body: {} });
    expect(answer.status, answer.text).toBe(200);
    const recorded = JSON.stringify(answer.body.stages.map((stage: { recorded: unknown }) => stage.recorded));
    expect(recorded).not.toContain(CARD);
    expect(recorded).not.toMatch(/4242[ -]?4242[ -]?4242[ -]?4242/);
    expect(recorded).toContain(`{{ ${card.id} }}`);
    await destination.close();
  });
});

describe('svc replay: a reactor with an https call', () => {
  it('re-runs with the recorded answer; a new request of the code is a difference', async () => {
    const { key, cert } = await selfSigned();
    let hits = 0;
    const server = createHttpsServer({ key, cert }, (_request, response) => {
      hits += 1;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ approved: true }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const code = (path: string) => `const https = require('node:https');
module.exports = async (req) => {
  const text = await new Promise((resolve, reject) => {
    const r = https.request({ hostname: '127.0.0.1', port: ${port}, path: '${path}', method: 'POST', ca: req.configuration.ca }, (res) => {
      let t = ''; res.on('data', (c) => (t += c)); res.on('end', () => resolve(t));
    });
    r.on('error', reject);
    r.end(JSON.stringify({ card: req.args.card }));
  });
  console.log('charged', req.args.card.slice(-4));
  return { raw: { answer: JSON.parse(text) } };
};`;
    const name = unique('charge');
    const created = await emu().call('POST', '/reactors', {
      body: { name, code: code('/charge'), configuration: { ca: cert } },
    });
    expect(created.status, created.text).toBe(201);
    const card = await createToken(emu(), { type: 'token', data: CARD });
    const invoked = await emu().call('POST', `/reactors/${created.body.id}/react`, {
      key: emu().privateKey,
      body: { args: { card: `{{ ${card.id} }}` } },
    });
    expect(invoked.status, invoked.text).toBe(200);
    const traceId = String(invoked.headers['svc-trace-id']);
    expect(hits).toBe(1);

    const same = await svc(`replay ${traceId} --json`);
    expect(same.code, same.stdout + same.stderr).toBe(0);
    const stages = same.json().stages as { stage: string; recorded: unknown }[];
    expect(stages.map((stage) => stage.stage)).toEqual(['args', 'https 1', 'console', 'result']);
    expect(JSON.stringify(stages)).not.toContain(CARD);
    expect(hits).toBe(1);

    const updated = await emu().call('PUT', `/reactors/${created.body.id}`, {
      body: { name, code: code('/other'), configuration: { ca: cert } },
    });
    expect(updated.status, updated.text).toBe(200);
    const differs = await svc(`replay ${traceId} --json`);
    expect(differs.code).toBe(1);
    const result = differs.json().stages.find((stage: { stage: string }) => stage.stage === 'result');
    expect(result.same).toBe(false);
    expect(JSON.stringify(result.replayed)).toMatch(/recorded call made no POST/);
    expect(hits).toBe(1);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});

describe('svc replay: refusals', () => {
  it('answers an unknown, hostile or other tenant’s trace id in one line', async () => {
    const unknown = await svc('replay no-such-trace');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
    expect(unknown.stderr).toMatch(/No kept call with trace id no-such-trace/);
    for (const hostile of ['../../etc/passwd', 'a'.repeat(500), '\u001b[31mred', '%00']) {
      const answer = await emu().call('POST', `/_emulator/replay/${encodeURIComponent(hostile)}`, { body: {} });
      expect([400, 404]).toContain(answer.status);
    }
    const destination = await echoDestination();
    const proxy = await proxyWithTransforms(destination.url);
    const card = await createToken(emu(), { type: 'token', data: CARD });
    const traceId = await callProxy(proxy, card.id);
    const other = await createTenant(emu(), unique('other'));
    const theirs = await emu().call('POST', `/_emulator/replay/${traceId}`, { key: other.management_key, body: {} });
    expect(theirs.status).toBe(404);
    const notManagement = await emu().call('POST', `/_emulator/replay/${traceId}`, { key: emu().privateKey, body: {} });
    expect(notManagement.status).toBe(403);
    await destination.close();
  });
});
