import { request as httpRequest, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, onTestFinished, test } from 'vitest';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/wait.js';

const TALKS = `module.exports = async (req) => {
  console.log('said', req.args.word ?? 'nothing');
  if (req.args.word === 'refuse') throw new BadRequestError('no such word');
  return { raw: { ok: true } };
};
`;

async function setup() {
  const emu = await startEmulator({ inMemory: true });
  const cwd = await tempDir();
  const created = await emu.call('POST', '/reactors', { body: { name: 'talks', code: TALKS, configuration: {} } });
  expect(created.status, created.text).toBe(201);
  const id = created.body.id as string;
  const say = async (word: string, traceId?: string) => {
    const headers: Record<string, string> = traceId === undefined ? {} : { 'svc-trace-id': traceId };
    return emu.call('POST', `/reactors/${id}/react`, { key: emu.privateKey, body: { args: { word } }, headers });
  };
  const svc = (argv: string[], url = emu.url) =>
    runSvc([...argv, '--base-url', url, '--management-key', emu.managementKey], { cwd });
  return { emu, id, say, svc };
}

const lines = (stdout: string) =>
  stdout
    .trimEnd()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** An emulator from before `since`, `tail` and `grep`: it never sees them (they are cut from the query). */
async function olderServer(emu: TestEmulator): Promise<string> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', emu.url);
    for (const name of ['since', 'tail', 'grep']) url.searchParams.delete(name);
    const forwarded = httpRequest(url, { method: request.method, headers: request.headers }, (got) => {
      response.writeHead(got.statusCode ?? 502, got.headers);
      got.pipe(response);
    });
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('svc logs filters', () => {
  test('--grep (case-insensitive), --tail, --since and --request narrow at the server; --json is snake_case', async () => {
    const { emu, say, svc } = await setup();
    const trace = '2b7d3c4e-1f00-4a00-8000-00000000abcd';
    await say('Apple');
    await say('banana', trace);
    await say('cherry');
    await eventually(() => expect(emu.events.filter((event) => event.type === 'console')).toHaveLength(3));

    const grep = await svc(['logs', '--grep', 'APPLE', '--json']);
    expect(grep.code, grep.stderr).toBe(0);
    expect(lines(grep.stdout)).toEqual([expect.objectContaining({ type: 'console', text: 'said Apple' })]);

    const tail = lines((await svc(['logs', '--tail', '2', '--json'])).stdout);
    expect(tail).toHaveLength(2);

    const request = lines((await svc(['logs', '--request', trace, '--json'])).stdout);
    expect(request.map((event) => event.type).sort()).toEqual(['console', 'invocation', 'request']);
    expect(request).toContainEqual(expect.objectContaining({ type: 'request', trace_id: trace }));
    expect(request).toContainEqual(
      expect.objectContaining({ type: 'console', request_id: trace, tenant_id: emu.tenantId }),
    );
    for (const event of request) expect(Object.keys(event).filter((key) => /[A-Z]/.test(key))).toEqual([]);

    expect(lines((await svc(['logs', '--since', '10m', '--json'])).stdout).length).toBeGreaterThanOrEqual(6);
    expect((await svc(['logs', '--since', '2099-01-01T00:00:00Z', '--json'])).stdout).toBe('');
    // The server narrows itself.
    const answered = await emu.call('GET', '/_emulator/events?grep=CHERRY&tail=1');
    expect(answered.text.match(/^data: /gm)).toHaveLength(1);
    expect(answered.text).toContain('said cherry');
    const refused = await emu.call('GET', '/_emulator/events?since=yesterday');
    expect(refused.status).toBe(400);
  });

  test('an older server that ignores since, tail and grep: the CLI narrows what it sends', async () => {
    const { emu, say, svc } = await setup();
    await say('Apple');
    await say('banana');
    await eventually(() => expect(emu.events.filter((event) => event.type === 'console')).toHaveLength(2));
    const url = await olderServer(emu);
    expect(lines((await svc(['logs', '--grep', 'apple', '--json'], url)).stdout)).toEqual([
      expect.objectContaining({ text: 'said Apple' }),
    ]);
    expect(lines((await svc(['logs', '--tail', '1', '--json'], url)).stdout)).toHaveLength(1);
    expect((await svc(['logs', '--since', '2099-01-01T00:00:00Z'], url)).stdout).toBe('');
  });

  test('an unknown reactor or proxy name, or a --since it cannot read, is one line and exit 1 or 2', async () => {
    const { svc } = await setup();
    expectOneLineError(await svc(['logs', '--reactor', 'nope']), 1, /^Error: No reactor named "nope"/);
    expectOneLineError(await svc(['logs', '--proxy', 'nope']), 1, /^Error: No proxy named "nope"/);
    expectOneLineError(await svc(['logs', '--since', 'yesterday']), 2, /^Error: --since takes a duration/);
    expectOneLineError(await svc(['logs', '--tail', '-1']), 2, /--tail/);
  });

  test("a code's expected 400 is one line in the log, without its stack", async () => {
    const { emu, say } = await setup();
    expect((await say('refuse')).status).toBe(400);
    await eventually(() => expect(emu.events.some((event) => event.type === 'invocation')).toBe(true));
    const pretty = await runSvc(['logs', '--no-color', '--base-url', emu.url, '--management-key', emu.managementKey], {
      cwd: await tempDir(),
      tty: true,
    });
    expect(pretty.stdout).toMatch(/reactor talks 400 .*no such word$/m);
    expect(pretty.stdout).not.toContain('    at ');
  });
});
