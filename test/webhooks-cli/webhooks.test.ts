import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, onTestFinished, test } from 'vitest';
import { signPayload } from '../../src/api/webhook-signature.js';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/wait.js';

const ECHO = `module.exports = async (req) => ({ raw: { said: req.args.word } });\n`;

async function setup(webhooks = { attempts: 2, retryBaseMs: 50, attemptTimeoutMs: 2000 }) {
  const emu = await startEmulator({ inMemory: true, webhooks });
  const cwd = await tempDir();
  const target = ['--base-url', emu.url, '--management-key', emu.managementKey, '--api-key', emu.privateKey];
  const created = await emu.call('POST', '/reactors', { body: { name: 'echo', code: ECHO, configuration: {} } });
  expect(created.status, created.text).toBe(201);
  return { emu, cwd, target, reactorId: created.body.id as string };
}

async function invokeAsync(emu: TestEmulator, reactorId: string, callbackUrl: string, word = 'hi'): Promise<string> {
  const accepted = await emu.call('POST', `/reactors/${reactorId}/react`, {
    key: emu.privateKey,
    body: { args: { word }, callback_url: callbackUrl },
  });
  expect(accepted.status, accepted.text).toBe(202);
  return accepted.body.id;
}

/** A loopback server recording what it got, answering `status`. */
async function receiver(status: number | (() => number)) {
  const got: { headers: IncomingMessage['headers']; body: string }[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      got.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(typeof status === 'number' ? status : status()).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got };
}

/** `svc webhooks listen` running in process until the test ends; its stdout as it comes. */
function listen(cwd: string, target: string[], extra: string[] = []) {
  const controller = new AbortController();
  let out = '';
  const done = runSvc(['webhooks', 'listen', ...extra, ...target], {
    cwd,
    signal: controller.signal,
    onStdout: (chunk) => (out += chunk),
  });
  onTestFinished(async () => {
    controller.abort();
    await done;
  });
  return {
    output: () => out,
    url: () =>
      eventually(() => /use (http:\S+) as callback_url/.exec(out)?.[1] ?? Promise.reject(new Error('not ready'))),
    stop: async () => {
      controller.abort();
      return done;
    },
  };
}

describe('svc webhooks listen', () => {
  test('prints a real delivery verified, forwards it to a loopback server with its signature, answers its status', async () => {
    const { emu, cwd, target, reactorId } = await setup();
    const app = await receiver(202);
    const listener = listen(cwd, target, ['--forward-to', app.url]);
    const url = await listener.url();
    const id = await invokeAsync(emu, reactorId, url, 'hello');
    await eventually(() => expect(listener.output()).toMatch(/echo {2}completed {2}verified {2}-> 202/), 15_000);
    expect(listener.output()).toContain('raw={"said":"hello"}');
    expect(app.got).toHaveLength(1);
    expect(app.got[0]!.headers['svc-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(JSON.parse(app.got[0]!.body).id).toBe(id);
    // The emulator recorded the forward's answer as the delivery's.
    const listed = await emu.call('GET', '/_emulator/webhooks');
    expect(listed.body.data[0]).toMatchObject({ id, status: 'delivered', last_status: 202, reactor: 'echo' });
    const result = await listener.stop();
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Stopped listening.');
  });

  test('a forged signature is shown NOT VERIFIED and answered 401; a body is made safe for the terminal', async () => {
    const { cwd, target } = await setup();
    const listener = listen(cwd, target);
    const url = await listener.url();
    const body = JSON.stringify({ id: 'x', reactor_id: 'nope', status: 'completed\u001b[31m' });
    const forged = await fetch(url, {
      method: 'POST',
      headers: { 'svc-signature': signPayload('whsec_wrong', body, Math.floor(Date.now() / 1000)) },
      body,
    });
    expect(forged.status).toBe(401);
    await eventually(() => expect(listener.output()).toContain('NOT VERIFIED (signature does not match)'));
    expect(listener.output()).not.toContain('\u001b');
    const unsigned = await fetch(url, { method: 'POST', body: '{}' });
    expect(unsigned.status).toBe(401);
    await eventually(() => expect(listener.output()).toContain('NOT VERIFIED (no SVC-SIGNATURE header)'));
  });

  test('--json prints the callback URL, then one line per delivery', async () => {
    const { emu, cwd, target, reactorId } = await setup();
    const listener = listen(cwd, target, ['--json']);
    await eventually(() =>
      expect(listener.output()).toMatch(/^\{"callback_url":"http:\/\/127\.0\.0\.1:\d+\/webhooks"\}\n/),
    );
    const url = JSON.parse(listener.output().split('\n')[0]!).callback_url;
    await invokeAsync(emu, reactorId, url);
    await eventually(() => expect(listener.output().split('\n').filter(Boolean)).toHaveLength(2), 15_000);
    const line = JSON.parse(listener.output().split('\n')[1]!);
    expect(line).toMatchObject({ reactor: 'echo', status: 'completed', verified: true, answered: 200 });
  });

  test('a bad --port or --forward-to is one line', async () => {
    const { cwd, target } = await setup();
    expectOneLineError(await runSvc(['webhooks', 'listen', '--port', 'x', ...target], { cwd }), 2, /--port must be/);
    expectOneLineError(
      await runSvc(['webhooks', 'listen', '--forward-to', 'ftp://x', ...target], { cwd }),
      2,
      /--forward-to must be an absolute http/,
    );
  });
});

describe('svc webhooks list and resend', () => {
  test('a failing callback: listed failed with its attempts and times; resend makes one more attempt, recorded', async () => {
    const { emu, cwd, target, reactorId } = await setup();
    const hook = await receiver(503);
    const id = await invokeAsync(emu, reactorId, `${hook.url}?token=secret`);
    await eventually(async () => {
      const listed = await emu.call('GET', '/_emulator/webhooks?status=failed');
      expect(listed.body.data.map((delivery: { id: string }) => delivery.id)).toEqual([id]);
    }, 15_000);
    const listed = await runSvc(['webhooks', 'list', '--status', 'failed', '--reactor', 'echo', '--json', ...target], {
      cwd,
    });
    expect(listed.code, listed.stderr).toBe(0);
    const [delivery] = listed.json().data;
    expect(delivery).toMatchObject({ id, status: 'failed', attempts: 2, last_status: 503, reactor: 'echo' });
    // The query string (a token, say) is not shown.
    expect(delivery.callback_url).toBe(hook.url);
    expect(delivery.attempt_log.map((attempt: { status: number }) => attempt.status)).toEqual([503, 503]);
    expect(Date.parse(delivery.attempt_log[0].at)).not.toBeNaN();

    const human = await runSvc(['webhooks', 'list', ...target], { cwd });
    expect(human.stdout).toMatch(new RegExp(`${id}\\s+echo\\s+failed\\s+2\\s+503`));
    expect(human.stdout).toMatch(/ {2}#2 {2}\S+ {2}503/);
    expect((await runSvc(['webhooks', 'list', '--status', 'delivered', ...target], { cwd })).stderr).toContain(
      'No webhook deliveries.',
    );
    // A reactor name that names nothing is an error (issue 31: as svc logs --reactor), not an empty list.
    const other = await runSvc(['webhooks', 'list', '--reactor', 'other', '--json', ...target], { cwd });
    expect(other.code).toBe(1);
    expect(JSON.parse(other.stderr).error.detail).toMatch(/^No reactor named "other"/);

    const again = await runSvc(['webhooks', 'resend', id, ...target], { cwd });
    expect(again.code).toBe(1);
    expect(again.stdout).toBe(`Attempt 3 of ${id} failed: 503.\n`);
    expect(hook.got).toHaveLength(3);
    const after = (await emu.call('GET', '/_emulator/webhooks')).body.data[0];
    expect(after).toMatchObject({ attempts: 3, status: 'failed' });
    expect(after.attempt_log[2]).toMatchObject({ attempt: 3, status: 503, resend: true });
  });

  test('resend of a delivery whose receiver now answers 2xx: delivered', async () => {
    const { emu, cwd, target, reactorId } = await setup({ attempts: 1, retryBaseMs: 50, attemptTimeoutMs: 2000 });
    let answer = 500;
    const hook = await receiver(() => answer);
    const id = await invokeAsync(emu, reactorId, hook.url);
    await eventually(async () => {
      expect((await emu.call('GET', '/_emulator/webhooks')).body.data[0]).toMatchObject({ id, status: 'failed' });
    }, 15_000);
    answer = 200;
    const again = await runSvc(['webhooks', 'resend', id, '--json', ...target], { cwd });
    expect(again.code, again.stderr).toBe(0);
    expect(again.json()).toMatchObject({ id, status: 'delivered', attempts: 2, last_status: 200 });
    // The same event: its id and body as on the first attempt.
    expect(hook.got[1]!.headers['svc-webhook-id']).toBe(hook.got[0]!.headers['svc-webhook-id']);
    expect(hook.got[1]!.body).toBe(hook.got[0]!.body);
  });

  test('a refused connection is listed with its error; an unknown id is one clear line', async () => {
    const { emu, cwd, target, reactorId } = await setup({ attempts: 1, retryBaseMs: 50, attemptTimeoutMs: 2000 });
    const id = await invokeAsync(emu, reactorId, 'http://127.0.0.1:9/nothing-here');
    await eventually(async () => {
      expect((await emu.call('GET', '/_emulator/webhooks')).body.data[0]).toMatchObject({ id, status: 'failed' });
    }, 15_000);
    const listed = (await emu.call('GET', '/_emulator/webhooks')).body.data[0];
    expect(listed.last_status).toBeNull();
    expect(listed.last_error).toMatch(/ECONNREFUSED/);
    expectOneLineError(
      await runSvc(['webhooks', 'resend', '00000000-0000-4000-8000-000000000000', ...target], { cwd }),
      1,
      /^Error: No webhook delivery 00000000-0000-4000-8000-000000000000 \(svc webhooks list shows them/,
    );
    expectOneLineError(
      await runSvc(['webhooks', 'resend', 'nope', ...target], { cwd }),
      1,
      /^Error: No webhook delivery "nope"/,
    );
    // The private key is not a management key: refused by the route.
    const refused = await emu.call('GET', '/_emulator/webhooks', { key: emu.privateKey });
    expect(refused.status).toBe(403);
  });

  test('list --reactor with a name that names nothing is one line and exit 1, as svc logs says, not an empty list', async () => {
    const { cwd, target, reactorId } = await setup();
    expectOneLineError(
      await runSvc(['webhooks', 'list', '--reactor', 'nope', ...target], { cwd }),
      1,
      /^Error: No reactor named "nope"; `svc reactors list` shows them\.$/,
    );
    // A name or id that exists, or an id no longer there (a deleted reactor's deliveries), still lists.
    for (const reactor of ['echo', reactorId, '00000000-0000-4000-8000-000000000000']) {
      const listed = await runSvc(['webhooks', 'list', '--reactor', reactor, ...target], { cwd });
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stderr).toMatch(/No webhook deliveries/);
    }
  });
});
