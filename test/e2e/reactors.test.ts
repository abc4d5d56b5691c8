import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { execSvc, spawnSvc } from '../helpers/process.js';
import { tempDir } from '../helpers/temp.js';

const parse = (line: string) => JSON.parse(line) as Record<string, unknown>;
const jsonEvent =
  (event: string, match: (value: Record<string, unknown>) => boolean = () => true) =>
  (line: string) =>
    line.startsWith('{') && parse(line).event === event && match(parse(line));

const CODE = `module.exports = async function (req) {
  console.log('charging', req.args.amount, 'for', req.configuration.MERCHANT);
  if (!req.args.amount) throw new BadRequestError('amount is required');
  return { raw: { charged: req.args.amount, merchant: req.configuration.MERCHANT } };
};
`;

describe('reactors with svc serve as a real process', () => {
  it('creates and invokes a reactor from the CLI; serve logs its console output and the invocation as JSON lines', async () => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'charge.js'), CODE);
    const serve = spawnSvc(['serve', '--port', '0'], { cwd });
    const listening = parse(await serve.waitForLine(() => true));
    expect(listening.event).toBe('listening');
    await serve.waitForLine(jsonEvent('ready'));

    // The CLI finds the emulator and its keys through .svc/credentials.json.
    const created = await execSvc(
      ['reactors', 'create', '--name', 'charge', '--code', 'charge.js', '--configuration', 'MERCHANT=acme', '--json'],
      { cwd },
    );
    expect(created.code, created.stderr).toBe(0);
    const reactor = JSON.parse(created.stdout) as { id: string; name: string; code: string };
    expect(reactor).toMatchObject({ name: 'charge', code: CODE });

    const invoked = await execSvc(['invoke', 'reactor', 'charge', '--args', '{"amount":42}'], { cwd });
    expect(invoked.code, invoked.stderr).toBe(0);
    expect(invoked.stderr).toBe('');
    expect(JSON.parse(invoked.stdout)).toEqual({ raw: { charged: 42, merchant: 'acme' } });
    // The reactor's console output goes to serve's log, not to the invoking CLI.
    expect(invoked.stdout).not.toContain('charging');

    const consoleLine = parse(await serve.waitForLine(jsonEvent('console')));
    const time = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const tenant = expect.stringMatching(/^[0-9a-f-]{36}$/);
    expect(consoleLine).toEqual({
      time,
      event: 'console',
      source: 'charge',
      tenant_id: tenant,
      level: 'log',
      text: 'charging 42 for acme',
      request_id: expect.any(String),
    });
    const invocation = parse(await serve.waitForLine(jsonEvent('invocation')));
    expect(invocation).toEqual({
      time,
      event: 'invocation',
      kind: 'reactor',
      name: 'charge',
      id: reactor.id,
      tenant_id: consoleLine.tenant_id,
      status: 200,
      ms: expect.any(Number),
      request_id: consoleLine.request_id,
    });
    // The console line comes before the invocation it belongs to.
    expect(serve.lines.findIndex(jsonEvent('console'))).toBeLessThan(serve.lines.findIndex(jsonEvent('invocation')));
    const request = parse(
      await serve.waitForLine(jsonEvent('request', (value) => value.path === `/reactors/${reactor.id}/react`)),
    );
    expect(request).toMatchObject({ method: 'POST', status: 200 });

    // A failing invocation: the CLI exits 1 with one line; serve logs the status and the user stack.
    const refused = await execSvc(['invoke', 'reactor', 'charge', '--args', '{}'], { cwd });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr.trim()).toBe('Error: Bad request (400): amount is required');
    const failed = parse(await serve.waitForLine(jsonEvent('invocation', (value) => value.status === 400)));
    expect(failed).toMatchObject({ name: 'charge', error: 'Bad request: amount is required' });
    expect(failed.stack).toMatch(/^BadRequestError: Bad Request\n.*charge\.js:3:/);

    serve.child.kill('SIGTERM');
    expect((await serve.exited).code).toBe(0);
    expect(parse(serve.lines.at(-1)!)).toMatchObject({ event: 'stopped' });
  });

  // Stopping wakes the backoff sleep: the delivery stays pending and resumes at the next start
  // (test/e2e/webhooks.test.ts); stopping must not wait for it.
  it('stops cleanly while a webhook delivery waits to be retried', async () => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'ok.js'), 'module.exports = async () => ({ raw: { ok: true } });\n');
    const receiver = createServer((_request, response) => response.writeHead(503).end());
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    onTestFinished(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

    const serve = spawnSvc(['serve', '--port', '0'], { cwd });
    await serve.waitForLine(jsonEvent('ready'));
    expect((await execSvc(['reactors', 'create', '--name', 'ok', '--code', 'ok.js'], { cwd })).code).toBe(0);
    const invoked = await execSvc(['invoke', 'reactor', 'ok', '--callback-url', hook, '--json'], { cwd });
    expect(JSON.parse(invoked.stdout).status).toBe('pending');
    const attempt = parse(await serve.waitForLine(jsonEvent('webhook')));
    expect(attempt).toMatchObject({ attempt: 1, ok: false, status: 503 });

    serve.child.kill('SIGTERM');
    const exited = await Promise.race([
      serve.exited,
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 8_000)),
    ]);
    expect(exited).toEqual({ code: 0, signal: null });
    expect(parse(serve.lines.at(-1)!)).toMatchObject({ event: 'stopped' });
  });
});
