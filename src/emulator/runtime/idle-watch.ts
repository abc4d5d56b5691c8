/**
 * How busy the sandbox process is with no call running (in the sandbox): work a finished call left
 * behind, or top-level code that keeps going. The emulator probes it, and the host asks it before
 * each call; past RuntimeWindows.busyForMs of busy time more than quiet time, the process is replaced.
 */
import { MIN_BUSY_WINDOW_MS, busyBalance } from './protocol.js';

/** The host's clock and the event loop's meter, taken before user code could pin the `performance` it is handed. */
const now = performance.now.bind(performance);
const loopUse = performance.eventLoopUtilization.bind(performance);

/**
 * Where a window with no call running begins: wall time, CPU time, and the event loop's use. The
 * loop's busy time counts as well as CPU time: on a loaded machine a spinning timer gets a small
 * share of a core, but its loop is still never idle.
 */
function mark() {
  return { at: now(), cpu: process.cpuUsage(), loop: loopUse() };
}

type Mark = ReturnType<typeof mark>;

export interface IdleReport {
  idleCpuMs: number;
  idleWallMs: number;
  /** The window it measures. */
  since: Mark;
}

export class IdleWatch {
  private since = mark();
  /** Busy time with no call running, less the quiet time since (protocol.ts busyBalance). */
  private balanceMs = 0;
  private judged: Mark | undefined;
  /** How busy the process was when the message being read began to arrive (before reading 5 MB of it). */
  atArrival: IdleReport | undefined;

  constructor(private readonly callsRunning: () => boolean) {}

  /** A new window with no call running begins: a call ended, or work asked for (a load) was done. */
  restart(): void {
    this.since = mark();
  }

  /** Busy time (CPU, or the event loop's) with no call running, over the wall time since the window began. */
  report(): IdleReport {
    const since = this.since;
    if (this.callsRunning()) return { idleCpuMs: 0, idleWallMs: 0, since };
    const idleWallMs = now() - since.at;
    // A window shorter than any that could count as busy needs no CPU reading (a system call, on the
    // path of every call that follows another closely).
    if (idleWallMs < MIN_BUSY_WINDOW_MS) return { idleCpuMs: 0, idleWallMs, since };
    const used = process.cpuUsage(since.cpu);
    // Busy time: CPU (the thread pool's included), or the event loop's, whichever is more.
    const busyMs = Math.max((used.user + used.system) / 1000, loopUse(since.loop).active);
    return { idleCpuMs: busyMs, idleWallMs, since };
  }

  /** Adds a window to the busy balance, once (a probe and a call may arrive in one read), and returns it. */
  judge(report: IdleReport): number {
    if (report.since !== this.judged) {
      this.judged = report.since;
      this.balanceMs = busyBalance(this.balanceMs, report.idleCpuMs, report.idleWallMs);
    }
    return this.balanceMs;
  }
}
