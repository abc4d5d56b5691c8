import type { ReactorResult } from '../../../api/types.js';
import { UserError } from '../../io/errors.js';

/** `--wait` asks at once, then less and less often: a reactor runs in milliseconds to minutes. */
export const POLL_FIRST_MS = 100;
export const POLL_MAX_MS = 2000;
const POLL_GROWTH = 1.5;

/** The wait between the `n`th poll (from 0) and the next: 100 ms, 150, 225... up to 2 s. */
export function pollDelay(n: number): number {
  return Math.min(POLL_FIRST_MS * POLL_GROWTH ** n, POLL_MAX_MS);
}

/** Ctrl-C while waiting: the run goes on, and where its result will be is said. */
export class StoppedWaiting extends UserError {
  override readonly exitCode = 130;
}

export interface WaitOptions {
  /** What a person reads while waiting (the spinner's words); the function returned ends them. */
  busy: (label: string) => () => void;
  signal: AbortSignal;
  /** The reactor as the user named it, for the spinner and the line of a Ctrl-C. */
  name: string;
  /** How to wait `ms` (tests may pass their own); resolves early when `signal` aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/**
 * Polls an asynchronous invocation's result (`poll`) with a growing interval until its run has ended and
 * its webhook delivery is no longer pending (delivered, or failed for good), and returns it. A 10 s run
 * costs about a dozen requests, not a hundred. Ctrl-C stops the wait (StoppedWaiting), not the run.
 */
export async function waitForResult(poll: () => Promise<ReactorResult>, options: WaitOptions): Promise<ReactorResult> {
  const { signal, name } = options;
  const sleep = options.sleep ?? abortableSleep;
  // Listening makes Ctrl-C stop the wait here (with its line) rather than exit the process at once.
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  let label = '';
  let done = () => {};
  const say = (next: string) => {
    if (next === label) return;
    const previous = done;
    // The new words start before the old end, so the spinner keeps its clock.
    done = options.busy(next);
    previous();
    label = next;
  };
  try {
    for (let n = 0; ; n++) {
      const outcome = await poll();
      if (outcome.status !== 'pending' && outcome.delivery.status !== 'pending') return outcome;
      if (signal.aborted) {
        throw new StoppedWaiting(
          `Stopped waiting (the run goes on); its result will be at: svc reactors result ${name} ${outcome.id}`,
        );
      }
      say(
        outcome.status === 'pending'
          ? `reactor ${name} to run (${outcome.id})`
          : `the webhook of reactor ${name} (${outcome.delivery.attempts} attempt${outcome.delivery.attempts === 1 ? '' : 's'} so far)`,
      );
      await sleep(pollDelay(n), stop.signal);
    }
  } finally {
    done();
    signal.removeEventListener('abort', onAbort);
  }
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(finish, ms);
    function finish() {
      clearTimeout(timer);
      signal.removeEventListener('abort', finish);
      resolve();
    }
    signal.addEventListener('abort', finish, { once: true });
  });
}
