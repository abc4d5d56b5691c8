import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/emulator/services/webhooks.js';
import { execSvc, spawnSvc, type SvcProcess } from '../helpers/process.js';
import { startReceiver, type Delivery } from '../helpers/receiver.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Webhooks across restarts of `svc serve` as a real process: a delivery pending when it stops
 * (SIGTERM) or dies (SIGKILL) resumes when it starts again; a call cut off while its code ran ends
 * failed, and that failure is delivered.
 */
const parse = (line: string) => JSON.parse(line) as Record<string, unknown>;
const jsonEvent =
  (event: string, match: (value: Record<string, unknown>) => boolean = () => true) =>
  (line: string) =>
    line.startsWith('{') && parse(line).event === event && match(parse(line));

const CODE = `module.exports = async function (req) {
  console.log('started', req.args.msg);
  if (req.args.wait) await new Promise((resolve) => setTimeout(resolve, req.args.wait));
  return { raw: { echoed: req.args.msg } };
};
`;

async function serve(cwd: string): Promise<SvcProcess> {
  const proc = spawnSvc(['serve', '--port', '0'], { cwd });
  await proc.waitForLine(jsonEvent('ready'));
  return proc;
}

async function setup() {
  const cwd = await tempDir();
  await writeFile(path.join(cwd, 'echo.js'), CODE);
  const first = await serve(cwd);
  const created = await execSvc(['reactors', 'create', '--name', 'echo', '--code', 'echo.js'], { cwd });
  expect(created.code, created.stderr).toBe(0);
  const secret = (await execSvc(['webhooks', 'secret'], { cwd })).stdout.trim();
  const invoke = async (url: string, args: Record<string, unknown>, extra: string[] = []) => {
    const invoked = await execSvc(
      ['invoke', 'reactor', 'echo', '--args', JSON.stringify(args), '--callback-url', url, ...extra, '--json'],
      { cwd },
    );
    expect(invoked.code, invoked.stderr).toBe(0);
    return (JSON.parse(invoked.stdout) as { id: string }).id;
  };
  const result = async (requestId: string) => {
    const polled = await execSvc(['reactors', 'result', 'echo', requestId, '--json'], { cwd });
    expect(polled.code, polled.stderr).toBe(0);
    return JSON.parse(polled.stdout) as Record<string, any>;
  };
  return { cwd, first, secret, invoke, result };
}

function expectSameEvent(deliveries: Delivery[], secret: string): void {
  expect(deliveries.length).toBeGreaterThan(1);
  const [firstDelivery] = deliveries;
  for (const delivery of deliveries) {
    expect(delivery.headers['svc-webhook-id']).toBe(firstDelivery!.headers['svc-webhook-id']);
    expect(delivery.body).toBe(firstDelivery!.body);
    expect(verifySignature(secret, delivery.body, delivery.headers['svc-signature'] as string)).toBe(true);
  }
}

describe('webhook deliveries survive a restart of svc serve', () => {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    it(`resumes a delivery that waited for a retry when serve got ${signal}`, async () => {
      const { cwd, first, secret, invoke, result } = await setup();
      // Down at first; back once the emulator has stopped.
      const hook = await startReceiver(() => 503);
      const requestId = await invoke(hook.url, { msg: signal });
      await first.waitForLine(jsonEvent('webhook', (event) => event.request_id === requestId && event.attempt === 1));
      expect(hook.received).toHaveLength(1);

      first.child.kill(signal);
      const exited = await first.exited;
      expect(exited).toEqual(signal === 'SIGTERM' ? { code: 0, signal: null } : { code: null, signal: 'SIGKILL' });
      hook.answer = () => 200;

      const second = await serve(cwd);
      const deliveries = await hook.waitFor(2);
      expectSameEvent(deliveries, secret);
      expect(JSON.parse(deliveries[1]!.body)).toMatchObject({
        id: requestId,
        status: 'completed',
        raw: { echoed: signal },
      });
      await second.waitForLine(jsonEvent('webhook', (event) => event.request_id === requestId && event.ok === true));
      expect(await result(requestId)).toMatchObject({
        status: 'completed',
        delivery: {
          status: 'delivered',
          attempts: 2,
          last_status: 200,
          event_id: deliveries[0]!.headers['svc-webhook-id'],
        },
      });
      expect(hook.received).toHaveLength(2);
    });
  }

  it('fails a call whose code was running when serve was killed, and delivers that failure after the restart', async () => {
    const { cwd, first, secret, invoke, result } = await setup();
    const hook = await startReceiver();
    const requestId = await invoke(hook.url, { msg: 'cut off', wait: 120_000 }, ['--timeout-ms', '180000']);
    await first.waitForLine(jsonEvent('console', (event) => event.text === 'started cut off'));
    first.child.kill('SIGKILL');
    await first.exited;
    expect(hook.received).toHaveLength(0);

    await serve(cwd);
    const [delivery] = await hook.waitFor(1);
    expect(verifySignature(secret, delivery!.body, delivery!.headers['svc-signature'] as string)).toBe(true);
    const payload = JSON.parse(delivery!.body);
    expect(payload).toEqual({
      id: requestId,
      reactor_id: expect.any(String),
      status: 'failed',
      error: {
        type: expect.any(String),
        title: 'Interrupted',
        status: 500,
        detail: expect.stringMatching(/stopped before this invocation finished/),
      },
      started_at: expect.any(String),
      completed_at: expect.any(String),
    });
    const polled = await result(requestId);
    expect(polled).toMatchObject({
      ...payload,
      delivery: { status: 'delivered', attempts: 1, last_status: 200, event_id: delivery!.headers['svc-webhook-id'] },
    });
  });
});
