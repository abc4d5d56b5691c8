import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';

/**
 * Children that die with their parent, however it ends (SIGKILL included). A child whose main
 * thread spins never reads the channel whose end would tell it that its parent is gone, so it
 * cannot be left to notice by itself: something outside it must stop it.
 *
 * On Linux with util-linux's setpriv the kernel does it: `setpriv --pdeathsig KILL -- node ...`
 * asks for SIGKILL when the thread that spawned the child exits (Node spawns from the main thread,
 * which lives as long as the process), costs nothing per child, and holds under Node's permission
 * model (it is set before node starts, and exec keeps it). Elsewhere (macOS, images without
 * setpriv) one watcher shell per process holds a pipe from it and is told each child's pid; when
 * the pipe closes (the parent is gone, whatever ended it) it kills the pids it was told of.
 */
export function spawnDying(command: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  const setpriv = setprivPath();
  if (setpriv !== undefined) return spawn(setpriv, ['--pdeathsig', 'KILL', '--', command, ...args], options);
  const child = spawn(command, args, options);
  watcher ??= ChildWatcher.create();
  watcher?.track(child);
  return child;
}

let setpriv: string | null | undefined;

/** setpriv on PATH, if it knows --pdeathsig (util-linux 2.33 and later); looked for once. */
function setprivPath(): string | undefined {
  if (setpriv === undefined) setpriv = process.platform === 'linux' ? (findSetpriv() ?? null) : null;
  return setpriv ?? undefined;
}

function findSetpriv(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    const file = path.join(dir, 'setpriv');
    try {
      accessSync(file, constants.X_OK);
    } catch {
      continue;
    }
    const help = spawnSync(file, ['--help'], { encoding: 'utf8', env: {}, timeout: 5000 });
    return help.status === 0 && help.stdout.includes('--pdeathsig') ? file : undefined;
  }
  return undefined;
}

/**
 * The watcher shell. It ignores the signals a terminal or a process manager sends to the whole
 * group (the parent may be stopping gracefully and still need it); the pipe's end alone stops it.
 * `+pid` adds a child, `-pid` forgets one that exited (so that a pid reused later is never killed).
 */
const WATCHER_SCRIPT = `trap '' INT HUP TERM QUIT
pids=' '
while IFS= read -r line; do
  case $line in
    +*) pids="$pids\${line#+} " ;;
    -*) p=\${line#-}; case $pids in *" $p "*) pids="\${pids%% $p *} \${pids#* $p }" ;; esac ;;
  esac
done
[ "$pids" = ' ' ] || kill -9 $pids 2>/dev/null
`;

const SHELL = '/bin/sh';

/** Where setpriv is missing. Module state on purpose: what it watches is this process, not an emulator. */
let watcher: ChildWatcher | undefined;

/** One `sh` (about 1 MB) for all children of this process, started with the first and ended with the last. */
class ChildWatcher {
  private readonly children = new Set<number>();
  private shell: ChildProcess | undefined;

  static create(): ChildWatcher | undefined {
    return existsSync(SHELL) ? new ChildWatcher() : undefined;
  }

  track(child: ChildProcess): void {
    const pid = child.pid;
    if (pid === undefined) return;
    this.children.add(pid);
    this.tell(`+${pid}`);
    child.once('exit', () => {
      this.children.delete(pid);
      this.tell(`-${pid}`);
      // With no child left there is nothing to watch: the shell ends, the next child starts another.
      if (this.children.size === 0) this.shell?.stdin?.end();
      this.shell = this.children.size === 0 ? undefined : this.shell;
    });
  }

  private tell(line: string): void {
    if (!this.shell) {
      if (line.startsWith('-')) return;
      this.shell = this.start();
      // A new shell (the first, or one stopped by someone) learns every child alive.
      this.shell.stdin!.write([...this.children].map((pid) => `+${pid}\n`).join(''));
      return;
    }
    this.shell.stdin!.write(`${line}\n`);
  }

  private start(): ChildProcess {
    const shell = spawn(SHELL, ['-c', WATCHER_SCRIPT], {
      stdio: ['pipe', 'ignore', 'ignore'],
      env: {},
      cwd: path.parse(process.cwd()).root,
      windowsHide: true,
    });
    // Neither the shell nor its pipe keeps this process alive; a shell gone makes the pipe fail quietly.
    shell.unref();
    shell.stdin!.on('error', () => {});
    shell.on('error', () => {});
    shell.once('exit', () => {
      if (this.shell === shell) this.shell = undefined;
    });
    return shell;
  }
}
