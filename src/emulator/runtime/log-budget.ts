/**
 * How much console output user code may send: counted in lines and in bytes, so that neither a flood
 * of empty lines nor a few huge ones gets through. A call has a budget of its own; output with no call
 * running (top-level code, its timers, an uncaught error) shares one per process, refilled slowly, so
 * that a top-level `setInterval` cannot flood the serve log. Past a budget, output is cut with one
 * notice line and the rest is dropped, counted. The sandbox keeps these budgets (host.ts), and the
 * emulator keeps them again, with a little slack, on what a sandbox sends (sandbox-process.ts): a
 * sandbox is not trusted to keep its own.
 *
 * Only runtime/ and lib/ may be loaded by the sandbox host: this file imports nothing.
 */

export interface LogLimits {
  /** Lines per call, and the most stray output may send in a burst. */
  maxLines: number;
  /** Bytes (UTF-8) per call, and the most stray output may send in a burst. */
  maxBytes: number;
}

export interface StrayLogLimits extends LogLimits {
  /** How fast the stray budget refills: lines a second (and STRAY_BYTES_PER_LINE bytes for each). */
  linesPerSecond: number;
}

/** What the emulator allows beyond the limits it told the sandbox: the sandbox's own notices. */
export interface LogSlack {
  lines: number;
  bytes: number;
  /** Stray output only: lines a second beyond the rate (the notices of each window). */
  linesPerSecond?: number;
}

/** The bytes each line of refill brings to the stray budget. */
export const STRAY_BYTES_PER_LINE = 1024;
/** Stray output that is over its budget gets at most one notice in this long. */
export const STRAY_NOTICE_WINDOW_MS = 10_000;

/** `4096` -> `4 KiB`; a size that is not whole KiB stays in bytes. */
export function sizeText(bytes: number): string {
  return bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`;
}

/** The first `maxBytes` bytes of `text` as UTF-8, never cutting a character in two. */
export function cutToBytes(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text);
  if (bytes.length <= maxBytes) return text;
  let end = Math.max(0, Math.floor(maxBytes));
  // A continuation byte (10xxxxxx) at the cut: step back to the start of its character.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

/**
 * One call's console budget. `take` is handed a line (as a function, so that a line past the budget
 * is never formatted) and answers what to send: the line, the line cut short with the notice, the
 * notice instead of the line, or undefined (dropped).
 */
export class CallLogBudget {
  private lines = 0;
  private bytes = 0;
  private cut = false;
  /** Lines dropped past the budget. */
  dropped = 0;

  constructor(
    private readonly limits: LogLimits,
    private readonly slack: LogSlack = { lines: 0, bytes: 0 },
  ) {}

  take(line: () => string): string | undefined {
    if (this.cut) {
      this.dropped++;
      return undefined;
    }
    if (this.lines >= this.limits.maxLines + this.slack.lines) {
      this.cut = true;
      this.dropped++;
      return this.notice();
    }
    this.lines++;
    const text = line();
    const left = this.limits.maxBytes + this.slack.bytes - this.bytes;
    const size = Buffer.byteLength(text);
    if (size <= left) {
      this.bytes += size;
      return text;
    }
    this.cut = true;
    this.bytes = this.limits.maxBytes + this.slack.bytes;
    return `${cutToBytes(text, left)}… ${this.notice()}`;
  }

  private notice(): string {
    return `[console output cut at ${this.limits.maxLines} lines / ${sizeText(this.limits.maxBytes)}: the rest of this call's output is dropped]`;
  }
}

/**
 * The budget of output with no call running, shared by a process: a bucket of `maxLines` lines and
 * `maxBytes` bytes, refilled at `linesPerSecond` lines (and STRAY_BYTES_PER_LINE bytes for each) a
 * second. Past it, lines are dropped, with one notice per STRAY_NOTICE_WINDOW_MS saying how many.
 */
export class StrayLogBudget {
  private lines: number;
  private bytes: number;
  private refilledAt: number;
  private noticeAt = Number.NEGATIVE_INFINITY;
  private noticed = false;
  /** Lines dropped since the last notice. */
  private droppedSinceNotice = 0;
  /** Lines dropped in all. */
  dropped = 0;

  constructor(
    private readonly limits: StrayLogLimits,
    private readonly now: () => number,
    private readonly slack: LogSlack = { lines: 0, bytes: 0 },
  ) {
    this.lines = this.maxLines;
    this.bytes = this.maxBytes;
    this.refilledAt = now();
  }

  take(line: () => string): string | undefined {
    const now = this.refill();
    if (this.lines < 1 || this.bytes < 1) {
      this.dropped++;
      this.droppedSinceNotice++;
      return this.noticeDue(now) ? this.notice(now) : undefined;
    }
    this.lines--;
    const text = line();
    const size = Buffer.byteLength(text);
    if (size <= this.bytes) {
      this.bytes -= size;
      return text;
    }
    const kept = cutToBytes(text, this.bytes);
    this.bytes = 0;
    return this.noticeDue(now) ? `${kept}… ${this.notice(now)}` : `${kept}…`;
  }

  private get maxLines(): number {
    return this.limits.maxLines + this.slack.lines;
  }

  private get maxBytes(): number {
    return this.limits.maxBytes + this.slack.bytes;
  }

  /** Adds what the time since the last refill brings, up to the bucket's size; answers the time. */
  private refill(): number {
    const now = this.now();
    const seconds = Math.max(0, now - this.refilledAt) / 1000;
    this.refilledAt = now;
    const rate = this.limits.linesPerSecond + (this.slack.linesPerSecond ?? 0);
    this.lines = Math.min(this.maxLines, this.lines + seconds * rate);
    this.bytes = Math.min(this.maxBytes, this.bytes + seconds * rate * STRAY_BYTES_PER_LINE);
    return now;
  }

  private noticeDue(now: number): boolean {
    return now - this.noticeAt >= STRAY_NOTICE_WINDOW_MS;
  }

  private notice(now: number): string {
    const { maxLines, maxBytes, linesPerSecond } = this.limits;
    const dropped = this.droppedSinceNotice;
    const since = this.noticed ? ' since the last notice' : '';
    // Told on a line cut at the byte budget, before any was dropped: what it says is the cut.
    const what =
      dropped === 0
        ? 'this line was cut, and the lines after it are dropped'
        : `${dropped} ${dropped === 1 ? 'line' : 'lines'} dropped${since}`;
    this.noticeAt = now;
    this.noticed = true;
    this.droppedSinceNotice = 0;
    return (
      `[console output with no call running is over its budget (${maxLines} lines / ${sizeText(maxBytes)}, ` +
      `refilled at ${linesPerSecond} lines a second): ${what}]`
    );
  }
}
