import { createServer, request as httpRequest, type ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { describe, expect, onTestFinished, test } from 'vitest';
import { streamEvents } from '../../src/cli/commands/logs.js';
import { UserError } from '../../src/cli/io/errors.js';
import { ApiClient } from '../../src/client/index.js';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { createTenant, startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/wait.js';

const TALKS = `module.exports = async (req) => {
  console.log('said', req.args.word ?? 'nothing');
  return { raw: { ok: true } };
};
`;

async function reactor(emu: TestEmulator, name: string, key = emu.managementKey): Promise<string> {
  const created = await emu.call('POST', '/reactors', { key, body: { name, code: TALKS, configuration: {} } });
  expect(created.status, created.text).toBe(201);
  return created.body.id;
}

async function invoke(emu: TestEmulator, id: string, word: string, key = emu.privateKey): Promise<void> {
  expect((await emu.call('POST', `/reactors/${id}/react`, { key, body: { args: { word } } })).status).toBe(200);
}

async function setup() {
  const emu = await startEmulator({ inMemory: true });
  const cwd = await tempDir();
  const target = ['--base-url', emu.url, '--management-key', emu.managementKey, '--api-key', emu.privateKey];
  return { emu, cwd, target };
}

/** A loopback HTTP server of another kind, closed when the test ends; `answer` writes each answer. */
async function otherServer(answer: (path: string, response: ServerResponse) => void): Promise<string> {
  const server = createServer((request, response) => answer(request.url ?? '/', response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A server that answers the platform API as the emulator does, but has no `/_emulator/` routes. */
function withoutEventStream(emulatorUrl: string): Promise<string> {
  return otherServer((path, response) => {
    const request = response.req;
    if (path.startsWith('/_emulator/')) {
      response.writeHead(404, { 'content-type': 'application/problem+json' });
      response.end(JSON.stringify({ type: 'about:blank', title: 'Not Found', status: 404 }));
      return;
    }
    const forwarded = httpRequest(
      `${emulatorUrl}${path}`,
      { method: request.method, headers: request.headers },
      (got) => {
        response.writeHead(got.statusCode ?? 502, got.headers);
        got.pipe(response);
      },
    );
    request.pipe(forwarded);
  });
}

describe('svc logs', () => {
  test("prints the tenant's recent events as lines on a terminal, JSON lines into a pipe, filtered by reactor", async () => {
    const { emu, cwd, target } = await setup();
    const other = await createTenant(emu);
    await invoke(emu, await reactor(emu, 'first'), 'one');
    await invoke(emu, await reactor(emu, 'second'), 'two');
    await invoke(emu, await reactor(emu, 'theirs', other.management_key), 'secret', other.private_key);
    await eventually(() => expect(emu.events.filter((event) => event.type === 'console')).toHaveLength(3));

    const pretty = await runSvc(['logs', '--no-color', ...target], { cwd, tty: true });
    expect(pretty.code, pretty.stderr).toBe(0);
    expect(pretty.stdout).toMatch(/^\d\d:\d\d:\d\d .*\[first\] said one$/m);
    expect(pretty.stdout).toMatch(/^\d\d:\d\d:\d\d .*reactor .*second.* 200 /m);
    expect(pretty.stdout).not.toContain('theirs');

    const piped = await runSvc(['logs', '--reactor', 'first', ...target], { cwd });
    expect(piped.code, piped.stderr).toBe(0);
    const events = piped.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(events).toContainEqual(expect.objectContaining({ type: 'console', source: 'first', text: 'said one' }));
    expect(events).toContainEqual(expect.objectContaining({ type: 'invocation', name: 'first', status: 200 }));
    expect(piped.stdout).not.toContain('second');
    expect(piped.stdout).not.toContain(emu.managementKey);

    const failures = await runSvc(['logs', '--status', '5xx', '--json', ...target], { cwd, tty: true });
    expect(failures.code, failures.stderr).toBe(0);
    expect(failures.stdout).toBe('');
  });

  test('a refused key and a status it cannot read are one-line errors', async () => {
    const { emu, cwd } = await setup();
    const refused = await runSvc(['logs', '--base-url', emu.url, '--management-key', 'key_wrong'], { cwd });
    expectOneLineError(refused, 1, /not valid/);
    const bad = await runSvc(
      ['logs', '--status', 'bad', '--base-url', emu.url, '--management-key', emu.managementKey],
      { cwd },
    );
    expectOneLineError(bad, 2, /--status must be/);
  });

  test('--follow prints new events; Ctrl-C exits 0', async () => {
    const { emu, cwd, target } = await setup();
    const id = await reactor(emu, 'live');
    await invoke(emu, id, 'before');
    const stop = new AbortController();
    let seen = '';
    const running = runSvc(['logs', '--follow', '--reactor', 'live', ...target], {
      cwd,
      signal: stop.signal,
      onStdout: (chunk) => (seen += chunk),
    });
    await eventually(() => expect(seen).toContain('said before'));
    await invoke(emu, id, 'after');
    await eventually(() => expect(seen).toContain('said after'));
    stop.abort();
    const result = await running;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
  });

  test('--follow exits 1, saying so, when the emulator stops', async () => {
    const { emu, cwd, target } = await setup();
    await invoke(emu, await reactor(emu, 'live'), 'hello');
    let seen = '';
    const running = runSvc(['logs', '--follow', ...target], { cwd, onStdout: (chunk) => (seen += chunk) });
    await eventually(() => expect(seen).toContain('said hello'));
    await emu.dispose();
    const result = await running;
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^Error: The event stream ended unexpectedly/);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});

describe('svc logs against what is not an emulator', () => {
  test('a web page, a 404 or a stream of something else is one clear line and exit 1', async () => {
    const cwd = await tempDir();
    const key = ['--management-key', 'key_management_0123456789'];
    const page = await otherServer((_path, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html>hello</html>');
    });
    expectOneLineError(
      await runSvc(['logs', '--base-url', page, ...key], { cwd }),
      1,
      /did not answer like the svc API/,
    );
    const missing = await otherServer((_path, response) => {
      response.writeHead(404, { 'content-type': 'text/html' });
      response.end('<h1>Not Found</h1>');
    });
    expectOneLineError(await runSvc(['logs', '--base-url', missing, ...key], { cwd }), 1, /no event stream/);
    const problem = await otherServer((_path, response) => {
      response.writeHead(404, { 'content-type': 'application/problem+json' });
      response.end(JSON.stringify({ title: 'Not Found', status: 404, detail: 'no such route' }));
    });
    expectOneLineError(await runSvc(['logs', '--base-url', problem, ...key], { cwd }), 1, /no event stream/);
    const garbage = await otherServer((_path, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end('data: {not json\n\n');
    });
    expectOneLineError(
      await runSvc(['logs', '--base-url', garbage, ...key], { cwd }),
      1,
      /event stream ended unexpectedly/,
    );
  });

  test('nothing listening is a one-line connection error', async () => {
    const cwd = await tempDir();
    const closed = `http://127.0.0.1:${await freePort()}`;
    const result = await runSvc(['logs', '--base-url', closed, '--management-key', 'key_management_0123456789'], {
      cwd,
    });
    expectOneLineError(result, 1, /^Error: Cannot reach http:\/\/127\.0\.0\.1:\d+: connection refused/);
  });
});

/** A loopback port nothing listens on (one that was free a moment ago). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('svc invoke reactor --logs', () => {
  test("prints that call's own console lines on stderr after the result", async () => {
    const { emu, cwd, target } = await setup();
    const id = await reactor(emu, 'talks');
    await invoke(emu, id, 'earlier call');
    const result = await runSvc(['invoke', 'reactor', 'talks', '--args', '{"word":"this call"}', '--logs', ...target], {
      cwd,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ raw: { ok: true } });
    expect(result.stderr).toMatch(/^\d\d:\d\d:\d\d \[talks\] said this call\n$/);
  });

  test("where the server has no event stream, the result is printed, then one line, and the exit code is the call's", async () => {
    const { emu, cwd } = await setup();
    await reactor(emu, 'talks');
    const url = await withoutEventStream(emu.url);
    const target = ['--base-url', url, '--management-key', emu.managementKey, '--api-key', emu.privateKey];
    const result = await runSvc(['invoke', 'reactor', 'talks', '--args', '{"word":"hi"}', '--logs', ...target], {
      cwd,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ raw: { ok: true } });
    expect(result.stderr).toMatch(/^Console lines are not available: .*no event stream.*\n$/);
    expect(result.stderr).not.toContain(emu.managementKey);
  });
});

describe('a server that goes silent', () => {
  /** Follows the stream of `baseUrl` with a short silence window, as `svc logs -f` does; returns what it printed and how it ended. */
  async function follow(baseUrl: string, silenceMs = 300) {
    const client = new ApiClient({ baseUrl, managementKey: 'key_management_0123456789' });
    const printed: string[] = [];
    const ended = await streamEvents(
      client,
      { follow: '1' },
      new AbortController().signal,
      (event) => printed.push(event.type),
      { silenceMs },
    ).then(
      () => 'ended',
      (error: unknown) => error,
    );
    return { printed, ended };
  }

  test('one that accepts and never answers is one line naming the silence', async () => {
    const sockets: net.Socket[] = [];
    const server = net.createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTestFinished(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    });
    const { ended } = await follow(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    expect(ended).toBeInstanceOf(UserError);
    expect((ended as Error).message).toMatch(/^The server at http:\/\/127\.0\.0\.1:\d+ sent nothing for 300 ms/);
    expect((ended as Error).message).not.toContain('\n');
  });

  test('one that stops sending mid-stream is one line naming the silence, after what it sent', async () => {
    const url = await otherServer((_path, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(
        `data: ${JSON.stringify({ type: 'warning', message: 'last words', time: new Date().toISOString() })}\n\n`,
      );
      // Then nothing, not even a heartbeat, and the connection stays open.
    });
    const { printed, ended } = await follow(url);
    expect(printed).toEqual(['warning']);
    expect(ended).toBeInstanceOf(UserError);
    expect((ended as Error).message).toMatch(/sent nothing for 300 ms \(not even a heartbeat\)/);
  });

  test('heartbeats keep a quiet stream open', async () => {
    let beats = 0;
    const url = await otherServer((_path, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const timer = setInterval(() => {
        beats++;
        // Comments only, far more often than the window; then the stream ends cleanly.
        if (beats < 8) response.write(': heartbeat\n\n');
        else {
          clearInterval(timer);
          response.end();
        }
      }, 50);
      response.on('close', () => clearInterval(timer));
    });
    const { printed, ended } = await follow(url, 5000);
    expect(beats).toBe(8);
    expect(printed).toEqual([]);
    expect(ended).toBe('ended');
  });
});
