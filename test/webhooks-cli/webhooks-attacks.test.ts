/**
 * `svc webhooks listen` and the delivery routes, attacked: a forward back to the receiver itself
 * (directly, or through another server) must not loop, and another tenant's deliveries are not
 * there for a management key of this one.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, onTestFinished, test } from 'vitest';
import { signPayload } from '../../src/api/webhook-signature.js';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { createTenant, http, startEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/wait.js';

async function setup() {
  const emu = await startEmulator({
    inMemory: true,
    webhooks: { attempts: 1, retryBaseMs: 50, attemptTimeoutMs: 2000 },
  });
  const cwd = await tempDir();
  const target = ['--base-url', emu.url, '--management-key', emu.managementKey, '--api-key', emu.privateKey];
  return { emu, cwd, target };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A loopback server that posts every request it gets, headers and all, on to `to()`. */
async function relay(to: () => string) {
  let hops = 0;
  const server = createServer((request, response) => {
    hops++;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
      ) as Record<string, string>;
      fetch(to(), { method: 'POST', headers, body: Buffer.concat(chunks) }).then(
        (answer) => response.writeHead(answer.status).end(),
        () => response.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, hops: () => hops };
}

describe('svc webhooks listen: no forwarding loop', () => {
  test('--forward-to the receiver itself is one line, whatever name the loopback host is given', async () => {
    const { cwd, target } = await setup();
    for (const host of ['127.0.0.1', 'localhost', '0.0.0.0']) {
      const port = await freePort();
      const run = await runSvc(
        ['webhooks', 'listen', '--port', String(port), '--forward-to', `http://${host}:${port}/webhooks`, ...target],
        { cwd },
      );
      expectOneLineError(run, 2, /--forward-to is this receiver itself/);
    }
  });

  test('a forward that comes back through another server is answered 508, not forwarded again', async () => {
    const { emu, cwd, target } = await setup();
    let listenUrl = '';
    const back = await relay(() => listenUrl);
    const controller = new AbortController();
    let out = '';
    const done = runSvc(['webhooks', 'listen', '--forward-to', back.url, ...target], {
      cwd,
      signal: controller.signal,
      onStdout: (chunk) => (out += chunk),
    });
    onTestFinished(async () => {
      controller.abort();
      await done;
    });
    listenUrl = await eventually(
      () => /use (http:\S+) as callback_url/.exec(out)?.[1] ?? Promise.reject(new Error('not ready')),
    );
    const secret = (await emu.call('GET', '/_emulator/webhook-secret')).body?.secret;
    const body = JSON.stringify({ id: 'x', status: 'completed' });
    const signature = signPayload(secret ?? 'whsec_x', body, Math.floor(Date.now() / 1000));
    const answer = await fetch(listenUrl, { method: 'POST', headers: { 'svc-signature': signature }, body });
    expect(answer.status).toBe(508);
    expect(back.hops()).toBe(1);
    await eventually(() => expect(out).toMatch(/-> 508/));
  });
});

describe('webhook deliveries of another tenant', () => {
  test('are neither listed nor resent for a management key of this tenant', async () => {
    const { emu } = await setup();
    const reactor = await emu.call('POST', '/reactors', {
      body: { name: 'echo', code: 'module.exports = async () => ({ raw: 1 });\n', configuration: {} },
    });
    const accepted = await emu.call('POST', `/reactors/${reactor.body.id}/react`, {
      key: emu.privateKey,
      body: { args: {}, callback_url: 'http://127.0.0.1:9/nothing' },
    });
    expect(accepted.status, accepted.text).toBe(202);
    await eventually(async () => {
      expect((await emu.call('GET', '/_emulator/webhooks')).body.data[0]).toMatchObject({ status: 'failed' });
    }, 15_000);
    const b = await createTenant(emu);
    const listed = await http(`${emu.url}/_emulator/webhooks`, 'GET', { key: b.management_key });
    expect(listed.body.data).toEqual([]);
    const resent = await http(`${emu.url}/_emulator/webhooks/${accepted.body.id}/resend`, 'POST', {
      key: b.management_key,
    });
    expect(resent.status).toBe(404);
  });
});
