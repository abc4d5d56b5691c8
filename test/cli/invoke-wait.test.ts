import { describe, expect, test } from 'vitest';
import { pollDelay, POLL_MAX_MS, waitForResult } from '../../src/cli/commands/invoke/wait.js';
import type { ReactorResult } from '../../src/api/types.js';
import { type CliResult, fieldsOf, runSvc } from '../helpers/cli.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { startReceiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/temp.js';

const REFUSES = `module.exports = async (req) => {
  console.log('checking', req.args.amount ?? 'nothing');
  if (!req.args.amount) throw new BadRequestError('amount is required');
  return { raw: { ok: true } };
};
`;
const SLOW = `module.exports = async () => {
  await new Promise((resolve) => setTimeout(resolve, 2000));
  return { raw: { done: true } };
};
`;

async function setup() {
  const emu = await startEmulator({ inMemory: true, webhooks: { retryBaseMs: 200 } });
  const cwd = await tempDir();
  const svc = (argv: string[]): Promise<CliResult> =>
    runSvc([...argv, '--base-url', emu.url, '--management-key', emu.managementKey, '--api-key', emu.privateKey], {
      cwd,
    });
  return { emu, svc };
}

async function reactor(emu: TestEmulator, name: string, code: string): Promise<string> {
  const created = await emu.call('POST', '/reactors', { body: { name, code, configuration: {} } });
  expect(created.status, created.text).toBe(201);
  return created.body.id;
}

describe('svc invoke reactor --wait', () => {
  test('a run that failed (the code answered 400) exits 1 with its one line, after the result and its console lines', async () => {
    const { emu, svc } = await setup();
    await reactor(emu, 'charge', REFUSES);
    const receiver = await startReceiver();
    const argv = ['invoke', 'reactor', 'charge', '--args', '{}', '--callback-url', receiver.url, '--wait'];
    const human = await svc([...argv, '--logs']);
    expect(human.code, human.stderr).toBe(1);
    expect(fieldsOf(human.stdout)).toMatchObject({ status: 'failed', delivery: 'delivered (1 attempt, last: 200)' });
    expect(human.stderr).toMatch(/\[charge\] checking nothing\n/);
    expect(human.stderr).toMatch(/^Error: Bad request \(400\): amount is required\n$/m);
    expect(human.stderr).not.toContain('    at ');

    const json = await svc([...argv, '--json']);
    expect(json.code).toBe(1);
    expect(json.json()).toMatchObject({
      status: 'failed',
      error: { status: 400, detail: 'Bad Request', errors: { error: ['amount is required'] } },
    });
    expect(JSON.parse(json.stderr).error).toMatchObject({ status: 400, title: 'Bad request' });
  });

  test('waits until the webhook is delivered (after a retry), and a delivery that failed for good exits 1', async () => {
    const { emu, svc } = await setup();
    await reactor(emu, 'charge', REFUSES);
    const flaky = await startReceiver((n) => (n === 1 ? 500 : 200));
    const ok = await svc([
      'invoke',
      'reactor',
      'charge',
      '--args',
      '{"amount":1}',
      '--callback-url',
      flaky.url,
      '--wait',
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(fieldsOf(ok.stdout)).toMatchObject({ status: 'completed', delivery: 'delivered (2 attempts, last: 200)' });
    expect(flaky.received).toHaveLength(2);

    const gone = await startReceiver(() => 410);
    const failed = await svc([
      'invoke',
      'reactor',
      'charge',
      '--args',
      '{"amount":1}',
      '--callback-url',
      gone.url,
      '--wait',
    ]);
    expect(failed.code).toBe(1);
    expect(fieldsOf(failed.stdout)).toMatchObject({ status: 'completed', delivery: 'failed (1 attempt, last: 410)' });
    expect(failed.stderr).toMatch(
      /^Error: Reactor charge ran, but its result was not delivered to .*: failed \(1 attempt, last: 410\)\./,
    );
  });

  test('polls with a growing interval: a 2 s run is a handful of requests, not twenty', async () => {
    const { emu, svc } = await setup();
    const id = await reactor(emu, 'slow', SLOW);
    const receiver = await startReceiver();
    const result = await svc(['invoke', 'reactor', 'slow', '--callback-url', receiver.url, '--wait', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toMatchObject({
      status: 'completed',
      raw: { done: true },
      delivery: { status: 'delivered' },
    });
    const polls = emu.events.filter(
      (event) => event.type === 'request' && event.path.startsWith(`/reactors/${id}/results/`),
    );
    expect(polls.length).toBeGreaterThan(0);
    expect(polls.length).toBeLessThanOrEqual(10);
  });

  test('the interval grows from 100 ms to 2 s; Ctrl-C stops the wait with where the result will be (exit 130)', async () => {
    expect(pollDelay(0)).toBe(100);
    expect(pollDelay(1)).toBe(150);
    expect(pollDelay(30)).toBe(POLL_MAX_MS);
    const pending = {
      id: 'r1',
      status: 'pending',
      delivery: { status: 'pending', attempts: 0, last_status: null, event_id: 'e' },
    } as unknown as ReactorResult;
    const controller = new AbortController();
    const labels: string[] = [];
    const waited = waitForResult(async () => pending, {
      signal: controller.signal,
      name: 'charge',
      busy: (label) => (labels.push(label), () => {}),
      sleep: async (_ms, signal) => {
        controller.abort();
        expect(signal.aborted).toBe(true);
      },
    });
    await expect(waited).rejects.toMatchObject({
      exitCode: 130,
      message: 'Stopped waiting (the run goes on); its result will be at: svc reactors result charge r1',
    });
    expect(labels).toEqual(['reactor charge to run (r1)']);
  });
});

describe('svc reactors result', () => {
  test('shows status, the result and the delivery for a person; --json is the API answer', async () => {
    const { emu, svc } = await setup();
    const id = await reactor(emu, 'charge', REFUSES);
    const receiver = await startReceiver();
    const invoked = await svc([
      'invoke',
      'reactor',
      'charge',
      '--args',
      '{"amount":1}',
      '--callback-url',
      receiver.url,
      '--wait',
      '--json',
    ]);
    const requestId = invoked.json().id as string;
    const human = await svc(['reactors', 'result', 'charge', requestId]);
    expect(human.code, human.stderr).toBe(0);
    expect(fieldsOf(human.stdout)).toMatchObject({
      id: requestId,
      status: 'completed',
      raw: '{',
      delivery: 'delivered (1 attempt, last: 200)',
    });
    expect(human.stdout).toContain('"ok": true');
    const json = await svc(['reactors', 'result', 'charge', requestId, '--json']);
    const api = await emu.call('GET', `/reactors/${id}/results/${requestId}`, { key: emu.privateKey });
    expect(json.stdout).toBe(`${JSON.stringify(api.body, null, 2)}\n`);
  });
});
