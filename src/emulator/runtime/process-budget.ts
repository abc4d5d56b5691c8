import os from 'node:os';
import type { SandboxProcess } from './sandbox-process.js';

/** What a process is counted at until its memory is read (a sandbox process just booted holds about 45 MB). */
const UNMEASURED_BYTES = 64 * 1024 * 1024;

/**
 * The default of RuntimeOptions.memoryBudgetMb: half the memory free when the runtime starts, at
 * least 512 MB and at most 8 GB (on a 24 GB machine with 20 GB free: 8 GB, about 170 idle sandbox
 * processes of 45 MB; the count's cap, `maxProcesses`, comes first).
 */
export function defaultMemoryBudgetMb(): number {
  return Math.min(8192, Math.max(512, Math.floor(os.freemem() / 2 / 2 ** 20)));
}

/**
 * The sandbox processes' budget: a count (`maxProcesses`) and their memory, each process counted
 * at its resident memory as its watch last read it (process-watch.ts). One more process fits when
 * the count is under its cap and the memory of those running, plus one more of their average
 * size, is within the budget: processes are as many as the machine's memory holds, not a fixed
 * number (8 of them made 20 active tenants boot a process on every call).
 */
export class ProcessBudget {
  private readonly budgetBytes: number;

  constructor(
    private readonly maxProcesses: number,
    memoryBudgetMb: number,
  ) {
    this.budgetBytes = memoryBudgetMb * 1024 * 1024;
  }

  hasRoom(processes: ReadonlySet<SandboxProcess>): boolean {
    if (processes.size >= this.maxProcesses) return false;
    let used = 0;
    let measured = 0;
    let count = 0;
    for (const process of processes) {
      const rss = process.watchdog.rssBytes;
      used += rss > 0 ? rss : UNMEASURED_BYTES;
      if (rss > 0) {
        measured += rss;
        count++;
      }
    }
    return used + (count > 0 ? measured / count : UNMEASURED_BYTES) <= this.budgetBytes;
  }
}
