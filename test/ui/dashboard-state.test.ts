import { describe, expect, test } from 'vitest';
import {
  emptyTally,
  initialDashboardState,
  reduceDashboard,
  tallyItem,
  type DashboardAction,
  type DashboardState,
  type FeedItem,
} from '../../src/ui/dashboard-state.js';
import type { ServeEvent } from '../../src/ui/serve-types.js';

const TIME = '2025-01-02T03:04:05.678Z';
const event = (value: Record<string, unknown>): FeedItem => ({
  kind: 'event',
  event: { time: TIME, ...value } as ServeEvent,
});
const request = (status: number) => event({ type: 'request', method: 'GET', path: '/x', status, ms: 1, traceId: 't' });
const run = (...actions: DashboardAction[]) => actions.reduce<DashboardState>(reduceDashboard, initialDashboardState);

/** Feeds items as the dashboard's log does: tallied, then one 'feed' action for the turn. */
const feed = (...items: FeedItem[]): DashboardAction => {
  const tally = emptyTally();
  for (const item of items) tallyItem(tally, item);
  return { type: 'feed', tally };
};

describe('reduceDashboard', () => {
  test('fed items count: requests, and failures (5xx, errors)', () => {
    const state = run(feed(request(200), request(503), event({ type: 'error', message: 'e' })));
    expect(state.requests).toBe(2);
    expect(state.failures).toBe(2);
    expect(run(feed(request(200)), feed(request(200))).requests).toBe(2);
  });

  test('clear resets the counters and the last reload', () => {
    const state = run(
      feed(request(500), event({ type: 'reload', target: 'reactor r', file: 'r.js', ok: true, ms: 1 })),
      { type: 'clear' },
    );
    expect(state.requests).toBe(0);
    expect(state.failures).toBe(0);
    expect(state.lastReload).toBeUndefined();
  });

  test('the last reload stays in view; a failed one counts as a failure; error notes too', () => {
    const state = run(
      feed(event({ type: 'reload', target: 'reactor r', file: 'r.js', ok: false, ms: 1, error: 'r.js:1:1 x' })),
      feed(
        { kind: 'note', note: { level: 'error', text: 'apply failed' } },
        { kind: 'note', note: { level: 'info', text: 'ok' } },
      ),
    );
    expect(state.lastReload?.spans.map((span) => span.text)).toContain('reactor r');
    expect(state.failures).toBe(2);
  });

  test('keys: k toggles, any other key hides; help toggles; re-applying flag', () => {
    expect(run({ type: 'toggle-keys' }).revealKeys).toBe(true);
    expect(run({ type: 'toggle-keys' }, { type: 'toggle-keys' }).revealKeys).toBe(false);
    expect(run({ type: 'toggle-keys' }, { type: 'hide-keys' }).revealKeys).toBe(false);
    expect(run({ type: 'hide-keys' })).toBe(initialDashboardState);
    expect(run({ type: 'toggle-help' }).showHelp).toBe(true);
    expect(run({ type: 'reapplying', on: true }).reapplying).toBe(true);
  });
});
