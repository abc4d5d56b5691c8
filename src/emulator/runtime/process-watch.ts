/**
 * A sandbox process watched from the emulator, outside the code it limits: its memory (RSS, read
 * from /proc), whether it answers (probes while it works), and work left running with no call (the
 * busy balance the probes report, protocol.ts busyBalance).
 */
import { readFileSync } from 'node:fs';
import { busyBalance } from './protocol.js';
import type { RuntimeWindows } from './types.js';

/** What the watch needs of its process. */
export interface Watched {
  pid(): number | undefined;
  readonly memoryMb: number;
  /** How long the watch waits before judging (RuntimeWindows: ticks, stuck, busy, responsive). */
  readonly windows: RuntimeWindows;
  /** Calls in flight or code loading: work asked for, whose own timeouts stop it. */
  working(): boolean;
  /** When the process last got a call. */
  lastUsed(): number;
  sendProbe(seq: number): void;
  kill(reason: string): void;
  /**
   * Not watched at all (a debugger may attach, `svc serve --inspect`): a process paused at a
   * breakpoint answers no probe and may grow, and nothing outside it can tell a pause from a hang.
   */
  readonly off?: boolean;
}

export class ProcessWatch {
  /** When the process last sent anything. */
  lastAnswerAt = performance.now();
  private probe: { seq: number; sentAt: number } | undefined;
  private probeSeq = 0;
  /** Busy time the probes found with no call running, less the quiet time. */
  private busyMs = 0;
  private bootRss = 0;
  /** The process's resident memory when last read (bytes; 0 before its boot or where /proc is missing). */
  rssBytes = 0;
  private tick: NodeJS.Timeout | undefined;
  private tickMs = 0;
  private stopped = false;

  constructor(private readonly process: Watched) {}

  /**
   * Whether the process answers: with calls in flight it is probed every active tick, and one that has
   * not answered for longer is held by code that does not yield.
   */
  get responsive(): boolean {
    const now = performance.now();
    return !this.probe || now - this.probe.sentAt < 20 || now - this.lastAnswerAt < this.process.windows.responsiveMs;
  }

  /** The process said something. */
  heard(): void {
    this.lastAnswerAt = performance.now();
  }

  /** Booted: memory is counted from here. */
  booted(): void {
    this.bootRss = this.rss() ?? 0;
    this.rssBytes = this.bootRss;
  }

  /** A probe's answer: how busy the process was with no call running. */
  answered(seq: number, idleCpuMs: number, idleWallMs: number): void {
    if (this.probe?.seq !== seq) return;
    this.probe = undefined;
    // Work under way is not idle time: it neither adds to the balance nor takes off it.
    if (!this.process.working()) this.busyMs = busyBalance(this.busyMs, idleCpuMs, idleWallMs);
    if (this.busyMs >= this.process.windows.busyForMs)
      this.process.kill('it kept a core busy after its last call returned');
  }

  /** Starts (or re-paces) the watch: every active tick while the process works or just did, else every idle tick. */
  pace(): void {
    if (this.stopped || this.process.off) return;
    const { activeTickMs, idleTickMs, recentlyUsedMs } = this.process.windows;
    const recent = performance.now() - this.process.lastUsed() < recentlyUsedMs;
    const every = this.process.working() || recent ? activeTickMs : idleTickMs;
    if (this.tick && this.tickMs === every) return;
    clearInterval(this.tick);
    this.tickMs = every;
    this.tick = setInterval(() => this.check(), every);
    this.tick.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.tick);
  }

  private check(): void {
    if (this.stopped) return;
    const rss = this.rss();
    if (rss !== undefined) this.rssBytes = rss;
    const limit = this.process.memoryMb;
    if (rss !== undefined && this.bootRss > 0 && rss - this.bootRss > limit * 1024 * 1024) {
      return this.process.kill(`it ran out of memory (limit ${limit} MB)`);
    }
    const now = performance.now();
    if (this.probe) {
      // A loop that never yields, with no call or load left to time out: nothing else would stop it.
      if (now - this.probe.sentAt > this.process.windows.stuckMs && !this.process.working())
        this.process.kill('it stopped answering after its last call returned');
    } else {
      this.probe = { seq: ++this.probeSeq, sentAt: now };
      this.process.sendProbe(this.probe.seq);
    }
    this.pace();
  }

  /** The process's resident memory, read from outside it (Linux); undefined where /proc is missing. */
  private rss(): number | undefined {
    try {
      const kilobytes = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${this.process.pid()}/status`, 'utf8'))?.[1];
      return kilobytes === undefined ? undefined : Number(kilobytes) * 1024;
    } catch {
      return undefined;
    }
  }
}
