import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The compiled host script. Under the test runner this module runs from src/, but a process needs JavaScript. */
export function hostScript(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const beside = path.join(here, 'host.js');
  if (existsSync(beside)) return beside;
  const built = path.join(here.replace(`${path.sep}src${path.sep}`, `${path.sep}dist${path.sep}`), 'host.js');
  if (existsSync(built)) return built;
  throw new Error(`the sandbox host is not built (${built}); run npm run build`);
}

/**
 * The Node flags of a sandbox process, the tightest that hold on Node 20: the permission model (no
 * file writes, no reads beyond svc's runtime, its packages and the project's node_modules, no child
 * processes, workers, native addons or OpenSSL engines), a heap limit, zero-filled Buffers. Memory:
 * a young generation of 1 MB semi-spaces, and one V8 worker thread instead of four (its garbage
 * collection and compiler helpers; each thread keeps malloc arenas of its own): 1-1.5 MB less
 * resident per process, at rest and after use, with no call slower (bench/run.js reactor).
 * --optimize-for-size would save 1 MB more but slows CPU-bound user code by a fifth or more.
 *
 * With `inspectPort` (`svc serve --inspect`), the inspector listens on 127.0.0.1 only, and the
 * permission model is off: on Node 20 a process started with both starts no inspector at all.
 */
export function sandboxFlags(script: string, projectDir: string, memoryMb: number, inspectPort?: number): string[] {
  const common = [
    `--max-old-space-size=${memoryMb}`,
    '--max-semi-space-size=1',
    '--v8-pool-size=1',
    '--stack-size=984',
    '--zero-fill-buffers',
    '--disable-proto=delete',
    // The host reads Node's table of error classes, to freeze each one (process-lockdown.ts).
    '--expose-internals',
    '--no-warnings',
    // Packages resolve as on the platform's Node 16: no "module-sync" export condition (Node 20.19's
    // require(esm) turns it on, and a package's ES module file cannot load as CommonJS).
    ...(process.allowedNodeEnvironmentFlags.has('--experimental-require-module')
      ? ['--no-experimental-require-module']
      : []),
  ];
  if (inspectPort !== undefined) return [`--inspect=127.0.0.1:${inspectPort}`, ...common];
  const permission = process.allowedNodeEnvironmentFlags.has('--permission')
    ? '--permission'
    : '--experimental-permission';
  const runtimeDir = path.dirname(script);
  const libDir = path.resolve(runtimeDir, '../../lib');
  const sesDir = path.dirname(createRequire(script).resolve('ses/package.json'));
  // /proc/self/fdinfo: the process closes descriptors it inherited by mistake (see host.ts).
  const readable = [
    runtimeDir,
    libDir,
    path.dirname(sesDir),
    path.join(projectDir, 'node_modules'),
    ...packageFiles(runtimeDir),
    '/proc/self/fdinfo',
  ];
  return [permission, ...[...new Set(readable)].map((entry) => `--allow-fs-read=${entry}`), ...common];
}

/** The package.json files above the runtime (the module loader reads them for "type"). */
function packageFiles(from: string): string[] {
  const files: string[] = [];
  for (let dir = from; ; dir = path.dirname(dir)) {
    files.push(path.join(dir, 'package.json'));
    if (path.dirname(dir) === dir || existsSync(path.join(dir, 'package.json'))) return files;
  }
}
