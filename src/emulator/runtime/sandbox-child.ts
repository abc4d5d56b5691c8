import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { spawnDying } from '../../lib/parent-death.js';
import { hostScript, sandboxFlags } from './sandbox-flags.js';

const OUT_OF_MEMORY = /heap out of memory|Reached heap limit|Fatal process out of memory/;

/** What a sandbox process's stderr said of its end, read as it comes. */
export interface CrashReport {
  /** V8 reported running out of heap. */
  outOfMemory: boolean;
}

/**
 * Starts a sandbox process: Node with the sandbox's flags (sandbox-flags.ts), no stdio of the
 * emulator (stdin and stdout are /dev/null, stderr a pipe read for crash reports), no environment,
 * its channel on fd 3; it dies with the emulator, however that ends (a spinning sandbox never reads
 * the channel's end).
 */
export function startSandboxChild(
  projectDir: string,
  memoryMb: number,
): {
  child: ChildProcess;
  crash: CrashReport;
} {
  const script = hostScript();
  const child = spawnDying(process.execPath, [...sandboxFlags(script, projectDir, memoryMb), script], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    env: {},
    cwd: path.parse(process.cwd()).root,
    windowsHide: true,
  });
  const crash: CrashReport = { outOfMemory: false };
  let tail = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (text: string) => {
    // V8's report of running out of heap comes before a native stack longer than the tail kept.
    const recent = tail + text;
    if (OUT_OF_MEMORY.test(recent)) crash.outOfMemory = true;
    tail = recent.slice(-200);
  });
  return { child, crash };
}
