import { Readable } from 'node:stream';
import { describe, expect, test, vi } from 'vitest';
import type { IO } from '../../src/cli/io/process.js';
import { createServeLog, type LogFormat } from '../../src/cli/serve/log.js';
import type { EmulatorEvent, EmulatorReady } from '../../src/emulator/index.js';
import { LINES_PER_WINDOW } from '../../src/ui/log-gate.js';
import { eventually } from '../helpers/wait.js';

const URL = 'http://127.0.0.1:43210';
const TENANT = '6e156901-0b0e-4da5-bf04-f2d552c4e3da';
const MANAGEMENT_KEY = 'key_local_mgt_AAAAAAAAAAAAAAAAAAAAAA';
const PRIVATE_KEY = 'key_local_pvt_BBBBBBBBBBBBBBBBBBBBBB';
const SECRET = 'whsec_CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC';
const CREDENTIALS = '/project/.svc/credentials.json';
const REQUEST_ID = '5b4bc383-b52e-4a56-9238-0f5bb9877d7b';
const REACTOR_ID = '85675246-ddf9-48e4-b162-7282458fd976';
const TIME = '2030-01-02T03:04:05.678Z';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** One of each event, as the emulator publishes them (stamped with the time). */
const EVENTS = {
  request: {
    time: TIME,
    type: 'request',
    method: 'GET',
    path: '/x',
    status: 200,
    ms: 3,
    traceId: 'trace-1',
    tenantId: TENANT,
  },
  invocation: {
    time: TIME,
    type: 'invocation',
    kind: 'reactor',
    name: 'charge',
    id: REACTOR_ID,
    tenantId: TENANT,
    status: 200,
    ms: 12.5,
    requestId: REQUEST_ID,
  },
  failed: {
    time: TIME,
    type: 'invocation',
    kind: 'reactor',
    name: 'charge',
    id: REACTOR_ID,
    tenantId: TENANT,
    status: 400,
    ms: 4,
    requestId: REQUEST_ID,
    error: 'Bad request: amount is required',
    stack: 'BadRequestError: amount is required\n    at module.exports (charge.js:2:9)',
  },
  console: {
    time: TIME,
    type: 'console',
    source: 'charge',
    tenantId: TENANT,
    level: 'log',
    text: 'charging 42',
    requestId: REQUEST_ID,
  },
  warn: {
    time: TIME,
    type: 'console',
    source: 'charge',
    tenantId: TENANT,
    level: 'warn',
    text: 'slow upstream',
    requestId: undefined,
  },
  webhook: {
    time: TIME,
    type: 'webhook',
    tenantId: TENANT,
    reactorId: REACTOR_ID,
    requestId: REQUEST_ID,
    url: 'http://127.0.0.1:9000/hook',
    attempt: 1,
    ok: true,
    status: 204,
    delivery: 'delivered',
  },
  webhookFailed: {
    time: TIME,
    type: 'webhook',
    tenantId: TENANT,
    reactorId: REACTOR_ID,
    requestId: REQUEST_ID,
    url: 'http://127.0.0.1:9000/hook',
    attempt: 2,
    ok: false,
    error: 'connection refused',
    delivery: 'failed',
  },
  error: {
    time: TIME,
    type: 'error',
    traceId: 'trace-2',
    message: 'boom',
    stack: 'Error: boom\n    at handler (server.js:1:1)',
  },
  expired: { time: TIME, type: 'expired', applications: 1, tokens: 2, transactions: 3, results: 4 },
} satisfies Record<string, EmulatorEvent>;

/** An IO whose stdout is captured (a terminal when `tty`); serve-log writes nowhere else. */
function fakeIo(tty = false) {
  let stdout = '';
  let stderr = '';
  const io: IO = {
    stdout: { write: (chunk: string) => (stdout += chunk), isTTY: tty },
    stderr: { write: (chunk: string) => (stderr += chunk) },
    stdin: Readable.from([]),
    env: {},
    cwd: '/project',
    signal: new AbortController().signal,
  };
  return { io, stdout: () => stdout, stderr: () => stderr, lines: () => stdout.split('\n').slice(0, -1) };
}

type Bootstrap = EmulatorReady['bootstrap'];

/** What a start brought up, as serve reports it; `created` and `generated` vary per start. */
function fakeEmulator(
  bootstrap: Partial<Bootstrap> = {},
  rest: Partial<Pick<EmulatorReady, 'credentialsFile' | 'tier'>> = {},
): EmulatorReady {
  return {
    url: URL,
    tier: rest.tier ?? 'enterprise',
    credentialsFile: 'credentialsFile' in rest ? rest.credentialsFile : CREDENTIALS,
    webhookSecret: SECRET,
    bootstrap: {
      tenantId: TENANT,
      created: true,
      generated: { managementKey: MANAGEMENT_KEY, privateKey: PRIVATE_KEY },
      keys: { managementKey: MANAGEMENT_KEY, privateKey: PRIVATE_KEY },
      ...bootstrap,
    },
  };
}

function logWith(format: LogFormat, color = false, { held = false, tty = false } = {}) {
  const capture = fakeIo(tty);
  const log = createServeLog(format, capture.io, color);
  // Events published before the first lines are held for after them; most tests look at events alone.
  if (!held) log.release();
  // The log writes once per turn of the event loop; reading flushes what is gathered so far.
  return {
    ...capture,
    log,
    stdout: () => (log.flush(), capture.stdout()),
    lines: () => (log.flush(), capture.lines()),
  };
}

describe('the JSON log', () => {
  test('listening first, then ready: which keys were generated and where they are, never a key or the secret', () => {
    const { log, lines, stderr } = logWith('json');
    log.started(fakeEmulator(), '.svc/data.json');
    const [listening, ready, ...rest] = lines().map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines()[0]).toMatch(new RegExp(`^\\{"time":"[^"]+","event":"listening","url":"${URL}"\\}$`));
    expect(listening).toEqual({ time: expect.stringMatching(ISO), event: 'listening', url: URL });
    expect(ready).toEqual({
      time: expect.stringMatching(ISO),
      event: 'ready',
      tier: 'enterprise',
      data: '.svc/data.json',
      credentials_file: CREDENTIALS,
      tenant_id: TENANT,
      created: true,
      generated_keys: ['management', 'private'],
    });
    expect(rest).toEqual([]);
    for (const secret of [MANAGEMENT_KEY, PRIVATE_KEY, SECRET]) expect(lines().join('\n')).not.toContain(secret);
    expect(stderr()).toBe('');
  });

  test('a later start shows no key and no secret; in memory, data and credentials_file are null', () => {
    const { log, lines } = logWith('json');
    log.started(
      fakeEmulator({ created: false, generated: {} }, { credentialsFile: undefined, tier: 'standard' }),
      undefined,
    );
    const ready = JSON.parse(lines()[1]!) as Record<string, unknown>;
    expect(ready).toEqual({
      time: expect.stringMatching(ISO),
      event: 'ready',
      tier: 'standard',
      data: null,
      credentials_file: null,
      tenant_id: TENANT,
      created: false,
      generated_keys: [],
    });
    expect(lines()).toHaveLength(2);
    expect(lines().join('\n')).not.toContain(SECRET);
    expect(lines().join('\n')).not.toContain(MANAGEMENT_KEY);
  });

  test('keys generated in memory are shown nowhere: a warning says to give them', () => {
    const { log, lines } = logWith('json');
    log.started(
      fakeEmulator({ created: true, generated: { privateKey: PRIVATE_KEY } }, { credentialsFile: undefined }),
      undefined,
    );
    const [, ready, warning] = lines().map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(ready).toMatchObject({ generated_keys: ['private'], credentials_file: null });
    expect(warning).toEqual({
      time: expect.stringMatching(ISO),
      event: 'warning',
      message: expect.stringMatching(/saved nowhere.*--management-key and --private-key/),
    });
    for (const secret of [PRIVATE_KEY, SECRET]) expect(lines().join('\n')).not.toContain(secret);
  });

  test('one flat snake_case line per event, then stopping and stopped', () => {
    const { log, lines } = logWith('json');
    log.started(fakeEmulator(), '.svc/data.json');
    for (const event of Object.values(EVENTS)) log.event(event);
    log.stopping('SIGTERM');
    log.stopped();
    const parsed = lines().map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed.map((line) => line.event)).toEqual([
      'listening',
      'ready',
      'request',
      'invocation',
      'invocation',
      'console',
      'console',
      'webhook',
      'webhook',
      'error',
      'expired',
      'stopping',
      'stopped',
    ]);
    expect(parsed.slice(2, -2)).toEqual([
      {
        time: TIME,
        event: 'request',
        method: 'GET',
        path: '/x',
        status: 200,
        ms: 3,
        trace_id: 'trace-1',
        tenant_id: TENANT,
      },
      {
        time: TIME,
        event: 'invocation',
        kind: 'reactor',
        name: 'charge',
        id: REACTOR_ID,
        tenant_id: TENANT,
        status: 200,
        ms: 12.5,
        request_id: REQUEST_ID,
      },
      {
        time: TIME,
        event: 'invocation',
        kind: 'reactor',
        name: 'charge',
        id: REACTOR_ID,
        tenant_id: TENANT,
        status: 400,
        ms: 4,
        request_id: REQUEST_ID,
        error: 'Bad request: amount is required',
        stack: EVENTS.failed.stack,
      },
      {
        time: TIME,
        event: 'console',
        source: 'charge',
        tenant_id: TENANT,
        level: 'log',
        text: 'charging 42',
        request_id: REQUEST_ID,
      },
      // An undefined field is kept as null: every line of a kind has the same keys.
      {
        time: TIME,
        event: 'console',
        source: 'charge',
        tenant_id: TENANT,
        level: 'warn',
        text: 'slow upstream',
        request_id: null,
      },
      {
        time: TIME,
        event: 'webhook',
        tenant_id: TENANT,
        reactor_id: REACTOR_ID,
        request_id: REQUEST_ID,
        url: 'http://127.0.0.1:9000/hook',
        attempt: 1,
        ok: true,
        status: 204,
        delivery: 'delivered',
      },
      {
        time: TIME,
        event: 'webhook',
        tenant_id: TENANT,
        reactor_id: REACTOR_ID,
        request_id: REQUEST_ID,
        url: 'http://127.0.0.1:9000/hook',
        attempt: 2,
        ok: false,
        error: 'connection refused',
        delivery: 'failed',
      },
      { time: TIME, event: 'error', trace_id: 'trace-2', message: 'boom', stack: EVENTS.error.stack },
      { time: TIME, event: 'expired', applications: 1, tokens: 2, transactions: 3, results: 4 },
    ]);
    expect(JSON.parse(lines().at(-2)!)).toEqual({
      time: expect.stringMatching(ISO),
      event: 'stopping',
      signal: 'SIGTERM',
    });
    expect(JSON.parse(lines().at(-1)!)).toEqual({ time: expect.stringMatching(ISO), event: 'stopped' });
    // Every line carries its time.
    for (const line of lines()) expect(JSON.parse(line).time).toMatch(ISO);
    // Each event is exactly one line, even with a multi-line stack inside.
    expect(lines()).toHaveLength(13);
    for (const line of lines()) expect(line).not.toMatch(/^\s/);
  });

  test('a request line stays one line of valid JSON whatever its path holds', () => {
    const { log, lines } = logWith('json');
    const path = '/tokens/"quoted"\\back\nline\u0000nul☃';
    log.event({ time: TIME, type: 'request', method: 'GET', path, status: 404, ms: 0.4, traceId: 'trace-"3"' });
    log.flush();
    expect(lines()).toHaveLength(1);
    expect(JSON.parse(lines()[0]!)).toEqual({
      time: TIME,
      event: 'request',
      method: 'GET',
      path,
      status: 404,
      ms: 0.4,
      trace_id: 'trace-"3"',
    });
  });

  test('a reload: ok with its time, or failed with the reason the previous code keeps serving', () => {
    const { log, lines } = logWith('json');
    log.event({ time: TIME, type: 'reload', target: 'reactor charge', file: 'reactors/charge.js', ok: true, ms: 12.5 });
    log.event({
      time: TIME,
      type: 'reload',
      target: 'reactor charge',
      file: 'reactors/charge.js',
      ok: false,
      ms: 3,
      error: 'SyntaxError: Unexpected end of input',
    });
    log.flush();
    expect(lines().map((line) => JSON.parse(line))).toEqual([
      { time: TIME, event: 'reload', target: 'reactor charge', file: 'reactors/charge.js', ok: true, ms: 12.5 },
      {
        time: TIME,
        event: 'reload',
        target: 'reactor charge',
        file: 'reactors/charge.js',
        ok: false,
        ms: 3,
        error: 'SyntaxError: Unexpected end of input',
      },
    ]);
    const pretty = logWith('pretty');
    pretty.log.event({
      time: TIME,
      type: 'reload',
      target: 'reactor charge',
      file: 'reactors/charge.js',
      ok: false,
      ms: 3,
      error: 'SyntaxError: Unexpected end of input',
    });
    pretty.log.flush();
    expect(pretty.lines()[0]).toMatch(
      /reload reactor charge failed, the previous code keeps serving: SyntaxError: Unexpected end of input$/,
    );
  });

  test('no ANSI escapes even when colour is allowed', () => {
    vi.stubEnv('FORCE_COLOR', '1');
    try {
      const { log, stdout } = logWith('json', true);
      log.started(fakeEmulator(), '.svc/data.json');
      for (const event of Object.values(EVENTS)) log.event(event);
      expect(stdout()).not.toMatch(/\u001b\[/);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe('events of the start', () => {
  test.each(['json', 'pretty'] as const)(
    'are held until the first lines are out (%s): where it listens comes first',
    (format) => {
      const { log, lines } = logWith(format, false, { held: true });
      log.event({ time: TIME, type: 'warning', message: 'the store had a damaged record' });
      expect(lines()).toEqual([]);
      log.started(fakeEmulator(), '.svc/data.json');
      expect(lines()[0]).toContain(URL);
      expect(lines().at(-1)).toContain('the store had a damaged record');
    },
  );

  test('a start that fails writes them all the same', () => {
    const { log, lines } = logWith('json', false, { held: true });
    log.event({ time: TIME, type: 'warning', message: 'the store had a damaged record' });
    log.release();
    expect(lines().map((line) => JSON.parse(line))).toEqual([
      { time: TIME, event: 'warning', message: 'the store had a damaged record' },
    ]);
  });
});

describe('the pretty log', () => {
  test('a first start on a terminal: the URL, tier and data, the tenant, the keys and the secret once, where the keys are saved', () => {
    const { log, lines, stdout, stderr } = logWith('pretty', false, { tty: true });
    log.started(fakeEmulator(), '.svc/data.json');
    expect(lines()).toEqual([
      `● svc emulator listening on ${URL}  (enterprise tier, data .svc/data.json)`,
      `  Created tenant ${TENANT} with a management and a private Application.`,
      `  Their keys, shown this once (saved to ${CREDENTIALS}):`,
      `    management  ${MANAGEMENT_KEY}`,
      `    private     ${PRIVATE_KEY}`,
      `  Webhook signing secret (SVC-SIGNATURE), shown this once: ${SECRET}`,
      '  Try: svc applications list        Stop: Ctrl-C',
    ]);
    expect(stdout()).not.toMatch(/\u001b\[/);
    expect(stderr()).toBe('');
  });

  test('a first start, pretty but not on a terminal (a log file): no key and no secret, where the keys are', () => {
    const { log, lines } = logWith('pretty');
    log.started(fakeEmulator(), '.svc/data.json');
    expect(lines()).toContain(`  Their keys are saved to ${CREDENTIALS} (not shown: stdout is not a terminal).`);
    expect(lines()).toContain('  Webhook signing secret (SVC-SIGNATURE): `svc webhooks secret` prints it.');
    for (const secret of [MANAGEMENT_KEY, PRIVATE_KEY, SECRET]) expect(lines().join('\n')).not.toContain(secret);
  });

  test('a later start in memory: no keys, no tenant line, no secret (svc webhooks secret prints it)', () => {
    const { log, stdout } = logWith('pretty', false, { tty: true });
    log.started(
      fakeEmulator({ created: false, generated: {} }, { credentialsFile: undefined, tier: 'standard' }),
      undefined,
    );
    expect(stdout()).toContain(`listening on ${URL}  (standard tier, in memory)`);
    expect(stdout()).not.toContain('Created tenant');
    expect(stdout()).not.toContain('shown this once');
    expect(stdout()).not.toContain(MANAGEMENT_KEY);
    expect(stdout()).not.toContain(SECRET);
    expect(stdout()).toContain('Webhook signing secret (SVC-SIGNATURE): `svc webhooks secret` prints it.');
  });

  test('in memory, the banner offers what works without a credentials file: the URL and keys as env exports', () => {
    const { log, lines } = logWith('pretty', false, { tty: true });
    log.started(fakeEmulator({}, { credentialsFile: undefined }), undefined);
    expect(lines().slice(-4)).toEqual([
      '  Try, from another shell (nothing is written in memory):',
      `    export SVC_BASE_URL=${URL} SVC_MANAGEMENT_KEY=${MANAGEMENT_KEY} SVC_API_KEY=${PRIVATE_KEY}`,
      '    svc applications list',
      '  Stop: Ctrl-C',
    ]);
    expect(lines().join('\n')).not.toContain('Try: svc applications list');
  });

  test('off a terminal, the exports name the keys without printing them', () => {
    const { log, lines } = logWith('pretty');
    log.started(fakeEmulator({}, { credentialsFile: undefined }), undefined);
    expect(lines()).toContain(
      `    export SVC_BASE_URL=${URL} SVC_MANAGEMENT_KEY=<the management key> SVC_API_KEY=<the private key>`,
    );
    expect(lines().join('\n')).not.toContain(MANAGEMENT_KEY);
  });

  test('keys that were given are not repeated in the exports; --data elsewhere says why the CLI here cannot find them', () => {
    const { log, lines } = logWith('pretty');
    log.started(
      fakeEmulator({ generated: {} }, { credentialsFile: '/elsewhere/credentials.json' }),
      '/elsewhere/data.json',
    );
    expect(lines().slice(-4)).toEqual([
      '  Try, from another shell (the CLI run here does not find /elsewhere/credentials.json):',
      `    export SVC_BASE_URL=${URL} SVC_MANAGEMENT_KEY=<the management key you gave> SVC_API_KEY=<the private key you gave>`,
      '    svc applications list',
      '  Stop: Ctrl-C',
    ]);
    expect(lines().join('\n')).not.toContain(MANAGEMENT_KEY);
  });

  test('only the generated key is shown, without "saved to" when there is no credentials file', () => {
    const { log, lines } = logWith('pretty', false, { tty: true });
    log.started(fakeEmulator({ generated: { privateKey: PRIVATE_KEY } }, { credentialsFile: undefined }), undefined);
    expect(lines()).toContain('  Their keys, shown this once:');
    expect(lines()).toContain(`    private     ${PRIVATE_KEY}`);
    expect(lines().join('\n')).not.toContain('management  ');
  });

  test('one readable line per event, a time first (the wording of the dashboard and svc logs); a 4xx the code chose is its one line', () => {
    const { log, lines, stdout } = logWith('pretty');
    for (const event of Object.values(EVENTS)) log.event(event);
    // The time of the event (UTC, as published), not of the line's writing.
    const time = '03:04:05';
    expect(lines()).toEqual([
      expect.stringMatching(new RegExp(`^${time} GET /x 200 3ms$`)),
      expect.stringMatching(new RegExp(`^${time} reactor charge 200 12\\.5ms$`)),
      expect.stringMatching(
        new RegExp(`^${time} reactor charge 400 4ms \\[${REQUEST_ID}\\] Bad request: amount is required$`),
      ),
      expect.stringMatching(new RegExp(`^${time} \\[charge\\] charging 42$`)),
      expect.stringMatching(new RegExp(`^${time} \\[charge\\] slow upstream$`)),
      expect.stringMatching(new RegExp(`^${time} webhook http://127\\.0\\.0\\.1:9000/hook attempt 1: 204$`)),
      expect.stringMatching(
        new RegExp(`^${time} webhook http://127\\.0\\.0\\.1:9000/hook attempt 2: connection refused, delivery failed$`),
      ),
      expect.stringMatching(new RegExp(`^${time} error \\[trace-2\\] boom$`)),
      '    Error: boom',
      // Every stack is shown as lines under its event, each indented (lib/terminal-text.ts safeLines).
      '        at handler (server.js:1:1)',
      expect.stringMatching(
        new RegExp(`^${time} expired: 1 Application, 2 tokens, 3 transactions, 4 reactor results$`),
      ),
    ]);
    expect(stdout()).not.toMatch(/\u001b\[/);
  });

  test('the user stack is indented under an invocation that failed (5xx)', () => {
    const { log, lines } = logWith('pretty');
    log.event({
      ...EVENTS.failed,
      status: 500,
      error: 'amount.toFixed is not a function',
      stack: 'TypeError: amount.toFixed is not a function\n    at module.exports (charge.js:2:9)',
    });
    expect(lines()).toEqual([
      expect.stringMatching(/^03:04:05 reactor charge 500 4ms \[.+\] amount\.toFixed is not a function$/),
      '    TypeError: amount.toFixed is not a function',
      '        at module.exports (charge.js:2:9)',
    ]);
  });

  test('an error without a stack shows its message; a failed webhook without a reason says failed', () => {
    const { log, lines } = logWith('pretty');
    log.event({ time: TIME, type: 'error', message: 'sweeping failed' });
    log.event({
      time: TIME,
      type: 'webhook',
      tenantId: TENANT,
      reactorId: REACTOR_ID,
      requestId: REQUEST_ID,
      url: 'http://h/x',
      attempt: 3,
      ok: false,
      status: 500,
      delivery: 'pending',
    });
    log.event({
      time: TIME,
      type: 'webhook',
      tenantId: TENANT,
      reactorId: REACTOR_ID,
      requestId: REQUEST_ID,
      url: 'http://h/x',
      attempt: 4,
      ok: false,
      delivery: 'pending',
    });
    expect(lines()[0]).toMatch(/ error sweeping failed$/);
    expect(lines()[0]).not.toContain('[');
    expect(lines()[1]).toMatch(/ attempt 3: 500$/);
    expect(lines()[2]).toMatch(/ attempt 4: failed$/);
  });

  test('stopping and stopped', () => {
    const { log, lines } = logWith('pretty');
    log.stopping('SIGINT');
    log.stopped();
    expect(lines()).toEqual(['Stopping (SIGINT)…', 'Stopped; the store is flushed.']);
  });

  test('with colour, statuses are painted by class and the URL is bold', () => {
    vi.stubEnv('FORCE_COLOR', '1');
    vi.stubEnv('NO_COLOR', undefined);
    try {
      const { log, stdout, lines } = logWith('pretty', true);
      log.started(fakeEmulator(), '.svc/data.json');
      expect(stdout()).toContain(`\u001b[1m${URL}\u001b[22m`);
      const before = lines().length;
      log.event({ ...EVENTS.request, status: 200 });
      log.event({ ...EVENTS.request, status: 404 });
      log.event({ ...EVENTS.request, status: 503 });
      const [ok, missing, broken] = lines().slice(before);
      expect(ok).toContain('\u001b[32m200\u001b[39m');
      expect(missing).toContain('\u001b[33m404\u001b[39m');
      expect(broken).toContain('\u001b[31m503\u001b[39m');
    } finally {
      vi.unstubAllEnvs();
    }
  });

  test('a flood of 100k events: a bounded number of lines, then one that says how many were dropped', async () => {
    const { log, lines } = logWith('pretty');
    for (let i = 0; i < 100_000; i++) log.event({ ...EVENTS.console, text: `line ${i}` });
    expect(lines()).toHaveLength(LINES_PER_WINDOW);
    // The flood stopped: the count is said at the end of the window.
    const dropped = 100_000 - LINES_PER_WINDOW;
    await eventually(() =>
      expect(lines().at(-1)).toMatch(new RegExp(`${dropped.toLocaleString('en-US')} lines dropped`)),
    );
    expect(lines().at(-1)).toContain('--log-format json keeps every line');
    log.stopped();
    expect(lines()).toHaveLength(LINES_PER_WINDOW + 2);
  });

  test('the JSON log keeps every line of a flood', () => {
    const { log, lines } = logWith('json');
    for (let i = 0; i < 5_000; i++) log.event({ ...EVENTS.console, text: `line ${i}` });
    expect(lines()).toHaveLength(5_000);
  });
});
