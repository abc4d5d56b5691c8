import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { spawnDying } from '../../lib/parent-death.js';
import { hostScript, sandboxFlags } from './sandbox-flags.js';
import type { LogEntry, SandboxLimits } from './types.js';

const OUT_OF_MEMORY = /heap out of memory|Reached heap limit|Fatal process out of memory/;
/** Node's line when its inspector cannot listen (the port taken by another program). */
const INSPECTOR_FAILED = /Starting inspector on [^\n]* failed[^\n]*/;

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
  { memoryMb, inspectPort }: Pick<SandboxLimits, 'memoryMb' | 'inspectPort'>,
  onLog: (entry: LogEntry) => void,
): {
  child: ChildProcess;
  crash: CrashReport;
  /** The OS process is gone (its inspector's port free again). */
  exited: Promise<void>;
} {
  const script = hostScript();
  const child = spawnDying(process.execPath, [...sandboxFlags(script, projectDir, memoryMb, inspectPort), script], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    env: {},
    cwd: path.parse(process.cwd()).root,
    windowsHide: true,
  });
  const exited = new Promise<void>((resolve) => {
    child.once('close', () => resolve());
    child.once('error', () => resolve());
  });
  const crash: CrashReport = { outOfMemory: false };
  let tail = '';
  let told = false;
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (text: string) => {
    // V8's report of running out of heap comes before a native stack longer than the tail kept.
    const recent = tail + text;
    if (OUT_OF_MEMORY.test(recent)) crash.outOfMemory = true;
    // Node goes on without a debugger when its port is taken: said, not left to a silent stderr.
    const refused = inspectPort !== undefined && !told && INSPECTOR_FAILED.exec(recent)?.[0];
    if (refused) {
      told = true;
      onLog({ level: 'warn', instance: 'sandbox', text: `No debugger can attach to the sandbox: ${refused.trim()}.` });
    }
    tail = recent.slice(-200);
  });
  return { child, crash, exited };
}
