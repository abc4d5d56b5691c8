import { render } from 'ink-testing-library';
import { afterEach, describe, expect, test } from 'vitest';
import { LiveServeDashboard } from '../../src/ui/live-serve-dashboard.js';
import { renderServeDashboard } from '../../src/ui/render-serve-dashboard.js';
import { LINES_PER_WINDOW } from '../../src/ui/log-gate.js';
import { createServeFeed } from '../../src/ui/serve-feed.js';
import type { ServeEvent, ServeKey, ServeResource } from '../../src/ui/serve-types.js';
import { FakeStdin, FakeStdout, plain } from '../helpers/terminal.js';
import { eventually } from '../helpers/wait.js';

const URL = 'http://127.0.0.1:8790';
const MANAGEMENT = 'key_local_mgt_7uW4kE9nQ2rT5yX8zA3bC6';
const PRIVATE = 'key_local_pvt_9pL2mN5qR8sT1vW4xY7zA3';
const KEYS: ServeKey[] = [
  { name: 'management', value: MANAGEMENT },
  { name: 'private', value: PRIVATE },
];
const TIME = '2025-01-02T03:04:05.678Z';

/** An event source like the emulator's hub: listeners in a set, events handed to each. */
function createHub<T>() {
  const listeners = new Set<(value: T) => void>();
  return {
    subscribe(listener: (value: T) => void) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    emit(value: T) {
      for (const listener of listeners) listener(value);
    },
    get listeners() {
      return listeners.size;
    },
  };
}

const request = (path: string, status = 200, extra: Record<string, unknown> = {}): ServeEvent =>
  ({
    type: 'request',
    tenantId: 't',
    method: 'POST',
    path,
    status,
    ms: 12.5,
    traceId: 't-1',
    time: TIME,
    ...extra,
  }) as ServeEvent;

interface Mounted {
  /** The live part as last drawn. */
  frame(): string;
  /** Everything written so far: the log lines are written once, above the live part. */
  log(): string;
  press(keys: string): void;
  events: ReturnType<typeof createHub<ServeEvent>>;
  quits: number;
  reapplies: number;
}

const unmounts: (() => void)[] = [];
afterEach(() => {
  for (const unmount of unmounts.splice(0)) unmount();
});

/** The live dashboard under ink-testing-library (a TTY stdin; every frame recorded, static lines included). */
function mount(options: { resources?: ServeResource[]; onReapply?: () => Promise<void> } = {}): Mounted {
  const events = createHub<ServeEvent>();
  const mounted: Mounted = {
    frame: () => plain(app.lastFrame() ?? ''),
    log: () => plain(app.frames.join('')),
    press: (keys) => app.stdin.write(keys),
    events,
    quits: 0,
    reapplies: 0,
  };
  const app = render(
    <LiveServeDashboard
      url={URL}
      keys={KEYS}
      resources={options.resources ?? []}
      feed={createServeFeed(events)}
      onQuit={() => void mounted.quits++}
      onReapply={options.onReapply && (() => (mounted.reapplies++, options.onReapply!()))}
    />,
  );
  unmounts.push(app.unmount);
  return mounted;
}

describe('the serve dashboard', () => {
  test('shows the URL and the keys by name, masked', () => {
    const { frame } = mount();
    expect(frame()).toContain(URL);
    expect(frame()).toMatch(/management\s+key_local_mgt_•{8}/);
    expect(frame()).toMatch(/private\s+key_local_pvt_•{8}/);
    expect(frame()).not.toContain(MANAGEMENT);
    expect(frame()).not.toContain(PRIVATE);
    expect(frame()).toContain('k shows them');
  });

  test('k shows the keys; the next key press masks them again', async () => {
    const { frame, press } = mount();
    press('k');
    await eventually(() => expect(frame()).toContain(MANAGEMENT));
    expect(frame()).toContain(PRIVATE);
    press('?');
    await eventually(() => expect(frame()).not.toContain(MANAGEMENT));
    expect(frame()).toMatch(/key_local_mgt_•{8}/);
  });

  test('request lines appear: method, path, status, latency and the number of tokens detokenized', async () => {
    const { frame, log, events } = mount();
    events.emit(request('/reactors/r1/react', 200, { detokenized: 3 }));
    events.emit(request('/tokens', 503));
    await eventually(() => expect(log()).toContain('03:04:05 POST /reactors/r1/react 200 12.5ms 3 tokens detokenized'));
    expect(log()).toContain('03:04:05 POST /tokens 503 12.5ms');
    await eventually(() => expect(frame()).toMatch(/2 requests, 1 failure/));
  });

  test('reactor runs, console output (made safe), reloads and errors appear', async () => {
    const { frame, log, events } = mount();
    events.emit({
      type: 'invocation',
      tenantId: 't',
      kind: 'reactor',
      name: 'charge',
      id: 'r1',
      status: 500,
      ms: 4,
      requestId: 'q1',
      error: 'boom',
      time: TIME,
    });
    events.emit({
      type: 'console',
      tenantId: 't',
      source: 'charge',
      level: 'log',
      text: 'hello\u001b[2Jworld',
      time: TIME,
    });
    events.emit({
      type: 'reload',
      target: 'reactor charge',
      file: 'charge.js',
      ok: false,
      ms: 3,
      error: 'x.js:2:5 Unexpected token',
      time: TIME,
    });
    events.emit({ type: 'error', message: 'store write failed', time: TIME });
    await eventually(() => expect(log()).toContain('store write failed'));
    expect(log()).toContain('reactor charge 500 4ms [q1] boom');
    expect(log()).toContain('[charge] hello\\u001b[2Jworld');
    expect(log()).toContain('reload reactor charge failed, the previous code keeps serving: x.js:2:5 Unexpected token');
    await eventually(() => expect(frame()).toMatch(/last reload 03:04:05 reactor charge failed/));
  });

  test('? shows the help and hides it again', async () => {
    const { frame, press } = mount();
    expect(frame()).not.toContain('clear the screen');
    press('?');
    await eventually(() => expect(frame()).toContain('clear the screen'));
    expect(frame()).toContain('re-apply svc.yaml (none loaded)');
    press('?');
    await eventually(() => expect(frame()).not.toContain('clear the screen'));
  });

  test('q and Ctrl-C call quit', async () => {
    const mounted = mount();
    mounted.press('q');
    await eventually(() => expect(mounted.quits).toBe(1));
    mounted.press('\u0003');
    await eventually(() => expect(mounted.quits).toBe(2));
  });

  test('r re-applies; a failure is shown in the log; without svc.yaml r says so', async () => {
    let fail = false;
    const mounted = mount({
      onReapply: async () => {
        if (fail) throw new Error('svc.yaml:3 reactors.x: unknown key "cod"');
      },
    });
    mounted.press('r');
    await eventually(() => expect(mounted.reapplies).toBe(1));
    fail = true;
    mounted.press('r');
    await eventually(() =>
      expect(mounted.log()).toContain('Re-apply failed: svc.yaml:3 reactors.x: unknown key "cod"'),
    );
    expect(mounted.reapplies).toBe(2);

    const bare = mount();
    bare.press('r');
    await eventually(() => expect(bare.log()).toContain('Nothing to re-apply'));
  });

  test('shows the resources loaded from svc.yaml', () => {
    const { frame } = mount({
      resources: [
        { kind: 'application', name: 'backend' },
        { kind: 'reactor', name: 'charge' },
        { kind: 'reactor', name: 'refund' },
        { kind: 'proxy', name: 'stripe' },
      ],
    });
    expect(frame()).toMatch(/resources\s+applications\s+backend/);
    expect(frame()).toMatch(/reactors\s+charge, refund/);
    expect(frame()).toMatch(/proxies\s+stripe/);
  });
});

describe('renderServeDashboard', () => {
  function start(stdin: FakeStdin, extra: { onQuit?: () => void } = {}) {
    const stdout = new FakeStdout();
    const events = createHub<ServeEvent>();
    const dashboard = renderServeDashboard({
      url: URL,
      keys: KEYS,
      events,
      onQuit: extra.onQuit ?? (() => {}),
      stdout: stdout as unknown as NodeJS.WriteStream,
      stderr: new FakeStdout() as unknown as NodeJS.WriteStream,
      stdin: stdin as unknown as NodeJS.ReadStream,
    });
    unmounts.push(() => void dashboard.unmount());
    return { stdout, events, dashboard };
  }

  test('without a TTY on stdin it renders and reads no keys: no raw-mode crash', async () => {
    const stdin = new FakeStdin({ tty: false });
    const { stdout, events, dashboard } = start(stdin);
    events.emit(request('/health'));
    await eventually(() => expect(plain(stdout.output)).toContain('POST /health 200'));
    dashboard.note({ level: 'info', text: 'applied svc.yaml: 2 created' });
    await dashboard.unmount();
    const output = plain(stdout.output);
    expect(output).toContain('applied svc.yaml: 2 created');
    expect(output).toContain(URL);
    expect(output).toContain('stdin is not a terminal');
    expect(output).not.toMatch(/raw mode/i);
    expect(events.listeners).toBe(0);
  });

  test('c clears the screen: old lines are not drawn again, new ones are', async () => {
    const stdin = new FakeStdin({ tty: true });
    const { stdout, events, dashboard } = start(stdin);
    expect(stdin.rawMode).toBe(true);
    events.emit(request('/before-clear'));
    await eventually(() => expect(stdout.output).toContain('/before-clear'));
    stdin.press('c');
    await eventually(() => expect(stdout.output).toContain('\u001b[H\u001b[0J'));
    events.emit(request('/after-clear'));
    await eventually(() => expect(stdout.output).toContain('/after-clear'));
    const afterClear = stdout.output.slice(stdout.output.lastIndexOf('\u001b[H\u001b[0J'));
    expect(afterClear).not.toContain('/before-clear');
    await dashboard.unmount();
    expect(stdin.rawMode).toBe(false);
  });

  test('setResources updates what is shown; unmount writes the events of its last turn', async () => {
    const stdin = new FakeStdin({ tty: true });
    const { stdout, events, dashboard } = start(stdin);
    dashboard.setResources([{ kind: 'reactor', name: 'fresh-reactor' }]);
    events.emit(request('/last-one'));
    await dashboard.unmount();
    expect(plain(stdout.output)).toContain('fresh-reactor');
    expect(plain(stdout.output)).toContain('/last-one');
  });

  test('a flood of 100k events: a bounded number of lines, one that says how many were dropped, true counters', async () => {
    const { stdout, events, dashboard } = start(new FakeStdin({ tty: false }));
    for (let i = 0; i < 100_000; i++) events.emit(request(`/flood/${i}`));
    const dropped = (100_000 - LINES_PER_WINDOW).toLocaleString('en-US');
    await eventually(() => expect(plain(stdout.output)).toContain(`${dropped} lines dropped`));
    dashboard.note({ level: 'info', text: 'after the flood' });
    await dashboard.unmount();
    const output = plain(stdout.output);
    expect(output.match(/POST \/flood\//g)).toHaveLength(LINES_PER_WINDOW);
    expect(output).toContain('after the flood');
    expect(output).toMatch(/100000 requests, 0 failures/);
  });
});
