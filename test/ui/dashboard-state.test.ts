import { describe, expect, test } from 'vitest';
import {
  initialDashboardState,
  reduceDashboard,
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

describe('reduceDashboard', () => {
  test('fed items become numbered pending lines and counters', () => {
    const state = run({ type: 'feed', items: [request(200), request(503), event({ type: 'error', message: 'e' })] });
    expect(state.pending.map((entry) => entry.id)).toEqual([1, 2, 3]);
    expect(state.requests).toBe(2);
    expect(state.failures).toBe(2);
    expect(state.settledId).toBe(0);
  });

  test('written lines are dropped and <Static> starts a new generation: memory stays flat', () => {
    const fed = run({ type: 'feed', items: [request(200), request(200)] });
    const written = reduceDashboard(reduceDashboard(fed, { type: 'written', upTo: 2 }), {
      type: 'feed',
      items: [request(200)],
    });
    expect(written.pending.map((entry) => entry.id)).toEqual([3]);
    expect(written.generation).toBe(1);
    expect(written.settledId).toBe(2);
    expect(written.requests).toBe(3);
  });

  test('a partial write keeps the lines that came after it', () => {
    const state = run(
      { type: 'feed', items: [request(200), request(200), request(200)] },
      { type: 'written', upTo: 1 },
    );
    expect(state.pending.map((entry) => entry.id)).toEqual([2, 3]);
  });

  test('clear drops pending lines and counters, and settles everything fed so far', () => {
    const state = run(
      {
        type: 'feed',
        items: [request(500), event({ type: 'reload', target: 'reactor r', file: 'r.js', ok: true, ms: 1 })],
      },
      { type: 'clear' },
    );
    expect(state.pending).toEqual([]);
    expect(state.requests).toBe(0);
    expect(state.failures).toBe(0);
    expect(state.lastReload).toBeUndefined();
    expect(state.settledId).toBe(2);
    expect(reduceDashboard(state, { type: 'feed', items: [request(200)] }).pending[0]?.id).toBe(3);
  });

  test('the last reload stays in view; a failed one counts as a failure; error notes too', () => {
    const state = run(
      {
        type: 'feed',
        items: [event({ type: 'reload', target: 'reactor r', file: 'r.js', ok: false, ms: 1, error: 'r.js:1:1 x' })],
      },
      {
        type: 'feed',
        items: [
          { kind: 'note', note: { level: 'error', text: 'apply failed' } },
          { kind: 'note', note: { level: 'info', text: 'ok' } },
        ],
      },
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
