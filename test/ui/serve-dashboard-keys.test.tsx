import { render } from 'ink-testing-library';
import { afterEach, describe, expect, test } from 'vitest';
import {
  emptyTally,
  initialDashboardState,
  reduceDashboard,
  tallyItem,
  type FeedItem,
} from '../../src/ui/dashboard-state.js';
import { LiveServeDashboard } from '../../src/ui/live-serve-dashboard.js';
import { createServeFeed } from '../../src/ui/serve-feed.js';
import type { ServeEvent, ServeKey } from '../../src/ui/serve-types.js';
import { plain } from '../helpers/terminal.js';
import { eventually } from '../helpers/wait.js';

const URL = 'http://127.0.0.1:8790';
const MANAGEMENT = 'key_local_mgt_7uW4kE9nQ2rT5yX8zA3bC6';
const PRIVATE = 'key_local_pvt_9pL2mN5qR8sT1vW4xY7zA3';

const unmounts: (() => void)[] = [];
afterEach(() => {
  for (const unmount of unmounts.splice(0)) unmount();
});

function mount(keys: ServeKey[], options: { exportLine?: boolean } = {}) {
  const app = render(
    <LiveServeDashboard
      url={URL}
      keys={keys}
      resources={[]}
      feed={createServeFeed({ subscribe: () => () => {} })}
      onQuit={() => {}}
      {...options}
    />,
  );
  unmounts.push(app.unmount);
  return { frame: () => plain(app.lastFrame() ?? ''), press: (text: string) => app.stdin.write(text) };
}

describe('the serve dashboard: keys', () => {
  test('with no key to show, the footer and the help do not offer k', async () => {
    const { frame, press } = mount([]);
    expect(frame()).toContain('? help  r re-apply  c clear  q quit');
    expect(frame()).not.toContain('k keys');
    press('?');
    await eventually(() => expect(frame()).toContain('close this help'));
    expect(frame()).not.toContain('show the keys');
  });

  test('the export line names the keys by their variables, masked until k', async () => {
    const keys = [
      { name: 'management', value: MANAGEMENT },
      { name: 'private', value: PRIVATE },
      { name: 'webhook secret', value: 'whsec_abcdefghijklmnop' },
    ];
    const { frame, press } = mount(keys, { exportLine: true });
    // The line wraps at the test terminal's width: read as one.
    const line = () => frame().replace(/\s*\n\s*/g, ' ');
    expect(line()).toContain(
      `export SVC_BASE_URL=${URL} SVC_MANAGEMENT_KEY=key_local_mgt_${'•'.repeat(8)} SVC_API_KEY=key_local_pvt_${'•'.repeat(8)}`,
    );
    expect(frame()).toContain('k keys');
    press('k');
    await eventually(() => expect(line()).toContain(`SVC_MANAGEMENT_KEY=${MANAGEMENT} SVC_API_KEY=${PRIVATE}`));
    expect(frame()).toContain('whsec_abcdefghijklmnop');
  });
});

describe('the serve dashboard: failures', () => {
  test('a 408 (a call that timed out) counts as a failure, as a 5xx does; other 4xx do not', () => {
    const tally = emptyTally();
    for (const status of [200, 400, 404, 408, 504])
      tallyItem(tally, {
        kind: 'event',
        event: { type: 'request', method: 'POST', path: '/x', status, ms: 1, traceId: 't', time: '' } as ServeEvent,
      } satisfies FeedItem);
    const state = reduceDashboard(initialDashboardState, { type: 'feed', tally });
    expect(state.requests).toBe(5);
    expect(state.failures).toBe(2);
  });
});
