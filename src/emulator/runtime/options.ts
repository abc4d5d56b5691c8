/**
 * The runtime's options with their defaults, in one place: its limits and the windows its watch of
 * sandbox processes waits before judging one (RuntimeWindows). A test sets short windows rather than
 * waiting out real seconds; the defaults are what `svc serve` runs with.
 */
import { defaultMemoryBudgetMb } from './process-budget.js';
import { DEFAULT_NPM_ALLOWLIST } from './protocol.js';
import type { LogEntry, RuntimeOptions, RuntimeWindows } from './types.js';

export const DEFAULT_WINDOWS: Readonly<RuntimeWindows> = Object.freeze({
  // More than the garbage collection that follows a large call in a large heap, which keeps the
  // main thread and V8's helper thread busy for 100-200 ms (a reactor holding 60 MB, measured) and
  // is then quiet, where work left running (a spinning timer, the thread pool kept busy) goes on.
  busyForMs: 1000,
  stuckMs: 1000,
  activeTickMs: 50,
  idleTickMs: 1000,
  recentlyUsedMs: 2000,
  // Longer than a probe's round trip plus a tick.
  responsiveMs: 120,
  leftWorkGraceMs: 100,
  ownerGoneMs: 1000,
});

export type ResolvedOptions = Required<Omit<RuntimeOptions, 'onLog' | 'inspect' | 'windows'>> & {
  onLog: (entry: LogEntry) => void;
  windows: RuntimeWindows;
};

export function resolveOptions(options: RuntimeOptions): ResolvedOptions {
  return {
    projectDir: options.projectDir ?? process.cwd(),
    npmAllowlist: options.npmAllowlist ?? DEFAULT_NPM_ALLOWLIST,
    maxProcesses: options.maxProcesses ?? 64,
    memoryBudgetMb: options.memoryBudgetMb ?? defaultMemoryBudgetMb(),
    maxProcessesPerGroup: options.maxProcessesPerGroup ?? 2,
    maxVersionsPerProcess: options.maxVersionsPerProcess ?? 256,
    isolation: options.isolation ?? 'tenant',
    idleMs: options.idleMs ?? 10_000,
    keepWarmMs: options.keepWarmMs ?? 300_000,
    memoryMb: options.memoryMb ?? 256,
    spares: options.spares ?? 0,
    loadTimeoutMs: options.loadTimeoutMs ?? 5_000,
    maxLogBytes: options.maxLogBytes ?? 64 * 1024,
    maxLogLines: options.maxLogLines ?? 1000,
    strayLogLinesPerSecond: options.strayLogLinesPerSecond ?? 10,
    maxSvcInFlight: options.maxSvcInFlight ?? 100,
    maxResultBytes: options.maxResultBytes ?? 5 * 1024 * 1024,
    onLog: options.onLog ?? (() => {}),
    windows: windowsOf(options.windows),
    // With a debugger, one process: the inspector's port is always the one process's.
    ...(options.inspect && { maxProcesses: 1, maxProcessesPerGroup: 1, spares: 0 }),
  };
}

/** The windows asked for over the defaults; a name not known or a length that is not a positive number is refused. */
function windowsOf(asked: Partial<RuntimeWindows> = {}): RuntimeWindows {
  for (const [name, value] of Object.entries(asked) as [string, unknown][]) {
    if (!(name in DEFAULT_WINDOWS))
      throw new TypeError(`runtime.windows.${name} is not a window: ${Object.keys(DEFAULT_WINDOWS).join(', ')}`);
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
      throw new RangeError(`runtime.windows.${name} must be a positive number of milliseconds (got ${String(value)})`);
  }
  return { ...DEFAULT_WINDOWS, ...asked };
}
