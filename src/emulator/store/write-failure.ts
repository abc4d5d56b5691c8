import type { Collection, TenantRecord } from './collection.js';
import { describeCause, remedyFor } from './io.js';

/** A shard file, named by its collection and number. */
export interface ShardRef {
  collection: Collection<TenantRecord>;
  shard: number;
}

/**
 * How a retry finds out whether what failed can be written now: a journal entry (an empty one,
 * written and removed), a checkpoint of the files saved writes wait for, or one shard file
 * rewritten with what is saved (a write of it failed, and nothing else waits for it).
 */
export type Probe = 'journal' | 'checkpoint' | ShardRef;

/** The last write the disk refused: the file (or folder) and the error. */
export interface WriteFailure {
  file: string;
  cause: unknown;
  probe: Probe;
}

/** The first retry after a failure comes this soon; each next one twice as late, up to the last. */
const FIRST_RETRY_MS = 200;
const MAX_RETRY_MS = 10_000;

/**
 * What the store cannot write now, kept until a write of the same file succeeds or a retry finds
 * it writable: `/health` reports it, and a write that must wait for it (the journal is full) is
 * refused with it at once rather than queued for ever. Retries back off, so a disk that stays
 * broken is tried every 10 s, not on every request; they run in the writer's turn (`onRetry`
 * wakes it), never beside a write of the same file.
 */
export class WriteFailures {
  private failure: WriteFailure | undefined;
  private delay = FIRST_RETRY_MS;
  private timer: NodeJS.Timeout | undefined;
  private due = false;
  private stopped = false;
  /** The failure last reported (file and cause), so that a retry failing alike stays quiet. */
  private reported: string | undefined;

  constructor(
    private readonly onRetry: () => void,
    private readonly report: (message: string) => void,
  ) {}

  get current(): WriteFailure | undefined {
    return this.failure;
  }

  /** Whether the store knows it cannot write and its retry is not yet due: skip the attempt. */
  get backingOff(): boolean {
    return this.failure !== undefined && !this.due;
  }

  /** Whether the retry's time has come: the writer runs it (see Writer.recheck). */
  get retryDue(): boolean {
    return this.failure !== undefined && this.due;
  }

  /**
   * Records a failure and schedules its retry. `message` is reported, once while the failure stays
   * the same: a failure no request hears of (a checkpoint's). A refused write's own 503 says it.
   */
  fail(failure: WriteFailure, message?: string): void {
    if (this.failure !== undefined) this.delay = Math.min(this.delay * 2, MAX_RETRY_MS);
    this.failure = failure;
    const key = `${failure.file}\n${describeCause(failure.cause)}`;
    if (message !== undefined && key !== this.reported) {
      this.reported = key;
      this.report(message);
    }
    this.schedule();
  }

  /** What succeeded: a failure it answers is gone, and its retry with it. */
  succeeded(answers: (failure: WriteFailure) => boolean): void {
    if (this.failure === undefined || !answers(this.failure)) return;
    this.failure = undefined;
    this.reported = undefined;
    this.due = false;
    this.delay = FIRST_RETRY_MS;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The store is closing: no retry may write after its lock is released. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** `/health`'s words for a store that cannot write; undefined while it can. */
  describe(): string | undefined {
    const failure = this.failure;
    if (failure === undefined) return undefined;
    return (
      `The store cannot write ${failure.file}: ${describeCause(failure.cause)}; ${remedyFor(failure.cause)}. ` +
      'Writes that need it are refused (503) meanwhile; svc tries again by itself.'
    );
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.due = false;
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.due = true;
      this.onRetry();
    }, this.delay);
    this.timer.unref();
  }
}
