import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * How long a process must have been quiet before it gives back what its heap grew. After 5 s, not
 * 2 s: V8 judges the allocation rate over its last 5 s, and only at a low one does a collection
 * shrink the young generation (bench/run.js reactor: 1-1.5 MB more per process given back).
 */
export const IDLE_RELEASE_MS = 5000;
/** How often the event loop's utilization is looked at: quiet is judged a second at a time. */
const TICK_MS = 1000;
/** Growth of the committed heap since the last release that is worth a collection. */
const GROWTH_BYTES = 1024 * 1024;
/** A tick's window is quiet when the event loop was busy less than this share of it. */
const QUIET_SHARE = 0.01;
/**
 * Releases that follow each other with no busy window between (code that keeps a little more alive
 * each time, and does nothing else) wait twice as long each time, up to this many times `idleMs` (a
 * minute).
 */
const MAX_WAIT_WINDOWS = 12;
/**
 * Above this much live heap a compacting collection costs more than it gives back (~2 ms of CPU a MB,
 * hundreds of milliseconds): such a process keeps what it holds until V8 collects it.
 */
const LARGE_HEAP_BYTES = 64 * 1024 * 1024;

export interface Release {
  /** The committed heap (V8's total_heap_size) before and after, in bytes. */
  committedBefore: number;
  committedAfter: number;
  /** The young generation's committed size before and after, in bytes. */
  youngBefore: number;
  youngAfter: number;
  /** How long the collection held the event loop. */
  ms: number;
}

export interface IdleRelease {
  /** How many times memory was released. */
  readonly releases: number;
  stop(): void;
}

/**
 * Gives memory back once a process goes quiet after work: V8 keeps the young generation and the old
 * space it grew under a burst of calls until its memory reducer runs, which may take tens of seconds
 * or never come in a process that then sits idle (issue 17: 6-12 MB of old space per process, and
 * `svc serve`'s young generation, 1 MB at rest, grows to 32 MB under load). One timer looks every
 * second at whether the event loop was quiet (and `isIdle`). As a quiet spell begins, a young
 * collection; once it has lasted `idleMs` (and two ticks more) and the heap has grown since the last
 * release (or start), a full one that shrinks the young generation and compacts the rest (10-50 ms).
 * Nothing runs on the path of a call; a process that stays idle is not collected again until it has
 * grown again, and one that grows while idle waits longer each time (see MAX_WAIT_WINDOWS). Light
 * steady traffic (over 1% of the event loop) is not quiet: memory comes back once the calls stop.
 */
export function releaseWhenIdle(
  options: {
    idleMs?: number;
    /** Whether the process has no work under way (a call waiting on I/O leaves the event loop quiet). */
    isIdle?: () => boolean;
    onRelease?: (release: Release) => void;
  } = {},
): IdleRelease {
  const idleMs = options.idleMs ?? IDLE_RELEASE_MS;
  const tickMs = Math.min(TICK_MS, idleMs);
  const collect = collections();
  // Start-up is a burst too (modules loaded, code compiled): the first quiet spell releases.
  let baseline = 0;
  let since = performance.eventLoopUtilization();
  let releases = 0;
  let quietMs = 0;
  let wait = 1;
  const timer = setInterval(() => {
    const window = performance.eventLoopUtilization(since);
    since = performance.eventLoopUtilization();
    if (window.utilization >= QUIET_SHARE) {
      // Work came: the next quiet spell after it releases as soon as it is long enough.
      quietMs = 0;
      wait = 1;
      return;
    }
    if (options.isIdle?.() === false) {
      quietMs = 0;
      return;
    }
    quietMs += tickMs;
    if (quietMs === tickMs) {
      // V8 shrinks a grown young generation only at a low allocation rate, judged over its
      // collections of the last 5 s: one as the quiet begins (a few milliseconds) closes the
      // burst's account, and the release comes more than 5 s after it (without it, a burst whose
      // last collection came before its last megabytes kept 30 MB, and so did a start).
      collect.young();
      since = performance.eventLoopUtilization();
    }
    if (quietMs < wait * idleMs + 2 * tickMs) return;
    const { total_heap_size: committedBefore, used_heap_size: used } = getHeapStatistics();
    // A process that shrank by itself (V8's reducer) counts from there.
    if (committedBefore < baseline) baseline = committedBefore;
    if (committedBefore < baseline + GROWTH_BYTES || used > LARGE_HEAP_BYTES) return;
    const youngBefore = youngGeneration();
    const started = performance.now();
    collect.all();
    const ms = performance.now() - started;
    baseline = getHeapStatistics().total_heap_size;
    releases++;
    quietMs = 0;
    wait = Math.min(wait * 2, MAX_WAIT_WINDOWS);
    // The collection is not work of the next window: without this, it would count as a busy one.
    since = performance.eventLoopUtilization();
    options.onRelease?.({ committedBefore, committedAfter: baseline, youngBefore, youngAfter: youngGeneration(), ms });
  }, tickMs);
  timer.unref();
  return {
    get releases() {
      return releases;
    },
    stop: () => clearInterval(timer),
  };
}

/**
 * A young collection, and a full one that compacts the old space and shrinks the young generation,
 * as V8's memory reducer does: a plain `gc()` leaves a third of what it could give back (fragmented
 * pages, the grown semi-spaces). Node 20 offers no call for that collection
 * (Isolate::LowMemoryNotification); these two V8 flags, set only while it runs, ask for it. `gc`
 * comes from a context made for the purpose and dropped: no global of the process (nor, in a
 * sandbox, of user code) ever holds it.
 */
function collections(): { young: () => void; all: () => void } {
  const given = (globalThis as { gc?: unknown }).gc;
  let gc: (options?: { type: 'minor' | 'major' }) => void;
  if (typeof given === 'function') gc = given as typeof gc;
  else {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as typeof gc;
    setFlagsFromString('--no-expose-gc');
  }
  // Flags the process was started with (on its command line or in NODE_OPTIONS) stay as they were.
  const started = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  const toggled = ['--optimize-for-size', '--compact-on-every-full-gc'].filter((flag) => !started.includes(flag));
  return {
    young: () => gc({ type: 'minor' }),
    all: () => {
      for (const flag of toggled) setFlagsFromString(flag);
      try {
        gc();
      } finally {
        for (const flag of toggled) setFlagsFromString(flag.replace('--', '--no-'));
      }
    },
  };
}

/** The committed size of V8's young generation, in bytes. */
function youngGeneration(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}
