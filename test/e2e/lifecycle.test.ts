import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { http } from '../helpers/emulator.js';
import { spawnSvc, type SvcProcess } from '../helpers/process.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/wait.js';

const MANAGEMENT_KEY = 'lifecycle-management-key-1';
const PRIVATE_KEY = 'lifecycle-private-key-0001';
const jsonEvent = (event: string) => (line: string) => line.startsWith('{') && JSON.parse(line).event === event;

/**
 * A call that logs, then (once the line is out) keeps its process's main thread busy for good, as
 * top-level code can between calls (which the emulator's watch would stop, were it alive).
 */
const SPINNING = `module.exports = async () => {
  console.log('spinning');
  await new Promise((resolve) => setTimeout(resolve, 50));
  for (;;) {}
};`;
/** A call that never ends and uses no CPU. */
const NEVER_ENDS = `module.exports = async () => { console.log('waiting'); await new Promise(() => {}); };`;

const onLinux = existsSync('/proc/self/stat');

/** The state letter and parent pid of a process, from /proc (undefined once it is gone). */
function procStat(pid: number): { state: string; ppid: number } | undefined {
  try {
    // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: state!, ppid: Number(ppid) };
  } catch {
    return undefined;
  }
}

/** The sandbox processes of `svc serve`: its node children (a parent-death watcher is a shell). */
function sandboxPids(serve: SvcProcess): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => procStat(pid)?.ppid === serve.child.pid)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('host.js');
      } catch {
        return false;
      }
    });
}

/** Gone, or a zombie left for init to reap: it runs no more. */
const gone = (pid: number) => {
  const stat = procStat(pid);
  return stat === undefined || stat.state === 'Z' || stat.state === 'X';
};

async function startServe(env: Record<string, string> = {}) {
  const cwd = await tempDir();
  const serve = spawnSvc(['serve', '--port', '0', '--in-memory', '--log-format', 'json'], {
    cwd,
    env: { SVC_MANAGEMENT_KEY: MANAGEMENT_KEY, SVC_PRIVATE_KEY: PRIVATE_KEY, ...env },
  });
  const { url } = JSON.parse(await serve.waitForLine(jsonEvent('listening'), 15_000)) as { url: string };
  await serve.waitForLine(jsonEvent('ready'), 15_000);
  const reactor = async (name: string, code: string) => {
    const created = await http(`${url}/reactors`, 'POST', {
      key: MANAGEMENT_KEY,
      body: { name, code, configuration: {} },
    });
    expect(created.status, created.text).toBe(201);
    return created.body.id as string;
  };
  // The answer never comes (the process is stopped under it): only the call's start is waited for.
  const call = (id: string, body: Record<string, unknown> = {}) =>
    void http(`${url}/reactors/${id}/react`, 'POST', { key: PRIVATE_KEY, body: { args: {}, ...body } }).catch(() => {});
  const consoleLine = (text: string) => (line: string) =>
    jsonEvent('console')(line) && JSON.parse(line).text?.includes(text);
  return { serve, url, reactor, call, consoleLine };
}

describe.skipIf(!onLinux)('no sandbox process outlives svc serve', () => {
  // Without setpriv on PATH (macOS, minimal images) a watcher process stands in for the kernel's parent-death signal.
  it.each([
    ['with setpriv', {}],
    ['without setpriv', { PATH: '' }],
  ])(
    'SIGKILL of svc serve %s stops its sandbox processes, a spinning one included',
    async (_, env) => {
      const { serve, reactor, call, consoleLine } = await startServe(env);
      call(await reactor('spins', SPINNING));
      await serve.waitForLine(consoleLine('spinning'), 15_000);
      const pids = sandboxPids(serve);
      // One of them spins (its main thread never reads the channel that would tell it the emulator is gone).
      await eventually(() => expect(pids.map((pid) => procStat(pid)?.state)).toContain('R'), 15_000);

      serve.child.kill('SIGKILL');
      expect((await serve.exited).signal).toBe('SIGKILL');
      await eventually(() => expect(pids.filter((pid) => !gone(pid))).toEqual([]), 15_000);
    },
    40_000,
  );

  it('SIGTERM of svc serve with a call that never ends exits 0 once the grace is over, its sandboxes stopped', async () => {
    const { serve, reactor, call, consoleLine } = await startServe();
    const id = await reactor('never-ends', NEVER_ENDS);
    // One call answered in the request (its timeout: 30 s), one asynchronous with the longest timeout (210 s).
    call(id);
    call(id, { callback_url: 'http://127.0.0.1:9/never', timeout_ms: 210_000 });
    await eventually(() => expect(serve.lines.filter(consoleLine('waiting'))).toHaveLength(2), 15_000);
    const pids = sandboxPids(serve);
    expect(pids.length).toBeGreaterThanOrEqual(1);

    serve.child.kill('SIGTERM');
    await serve.waitForLine(jsonEvent('stopping'));
    // The grace is 10 s; the calls' own timeouts (30 s, 210 s) must not hold the exit. 60 s leaves room for a busy machine.
    const exited = await Promise.race([
      serve.exited,
      new Promise((resolve) => setTimeout(() => resolve('still running'), 60_000)),
    ]);
    expect(exited).toEqual({ code: 0, signal: null });
    expect(pids.filter((pid) => !gone(pid))).toEqual([]);
  }, 90_000);
});
