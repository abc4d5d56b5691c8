import { describe, expect, test } from 'vitest';
import { createLogGate, droppedText, LINES_PER_WINDOW } from '../../src/ui/log-gate.js';
import { eventually } from '../helpers/wait.js';

/** A gate on a clock the test moves, recording what it shows. */
function gated(options: { perWindow?: number; windowMs?: number; behind?: () => boolean } = {}) {
  let time = 0;
  const shown: (number | string)[] = [];
  const gate = createLogGate<number>(
    { line: (item) => shown.push(item), dropped: (count) => shown.push(`dropped ${count}`) },
    { ...options, now: () => time },
  );
  return { gate, shown, advance: (ms: number) => void (time += ms) };
}

describe('createLogGate', () => {
  test('a flood of 100k items shows one window of them; the next line first says how many were dropped', () => {
    const { gate, shown, advance } = gated();
    for (let i = 0; i < 100_000; i++) gate.offer(i);
    expect(shown).toHaveLength(LINES_PER_WINDOW);
    expect(gate.pending).toBe(100_000 - LINES_PER_WINDOW);
    advance(1000);
    gate.offer(-1);
    expect(shown.slice(LINES_PER_WINDOW)).toEqual([`dropped ${100_000 - LINES_PER_WINDOW}`, -1]);
    expect(gate.pending).toBe(0);
    gate.report();
    expect(shown).toHaveLength(LINES_PER_WINDOW + 2);
  });

  test('a steady flood shows a window of lines and one count per window, not a count per line', () => {
    const { gate, shown, advance } = gated({ perWindow: 3, windowMs: 100 });
    for (let tick = 0; tick < 500; tick++) {
      gate.offer(tick);
      advance(1);
    }
    const counts = shown.filter((item) => typeof item === 'string');
    expect(counts.length).toBeLessThanOrEqual(5);
    expect(shown.length - counts.length).toBe(15);
  });

  test('lines of svc its own pass whatever the window holds, after the count', () => {
    const { gate, shown } = gated({ perWindow: 1 });
    gate.offer(1);
    gate.offer(2);
    gate.always(3);
    expect(shown).toEqual([1, 'dropped 1', 3]);
  });

  test('an output that is behind drops lines too', () => {
    let behind = true;
    const { gate, shown } = gated({ behind: () => behind });
    gate.offer(1);
    behind = false;
    gate.offer(2);
    expect(shown).toEqual(['dropped 1', 2]);
  });

  test('when the flood stops, the count is said at the end of the window', async () => {
    const shown: (number | string)[] = [];
    const gate = createLogGate<number>(
      { line: (item) => shown.push(item), dropped: (count) => shown.push(`dropped ${count}`) },
      { perWindow: 2, windowMs: 20 },
    );
    for (let i = 0; i < 10; i++) gate.offer(i);
    await eventually(() => expect(shown).toEqual([0, 1, 'dropped 8']));
  });

  test('the count is written in words', () => {
    expect(droppedText(12_345)).toBe('… 12,345 lines dropped (more than the log can show)');
    expect(droppedText(1, '; see --x')).toBe('… 1 line dropped (more than the log can show); see --x');
  });
});
