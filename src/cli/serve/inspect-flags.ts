/**
 * `svc serve --inspect[=PORT]`: a debugger (Chrome DevTools, VS Code) attaches to the sandbox on
 * 127.0.0.1, with breakpoints in the user's own files: the flag, the emulator's `inspect` option made
 * of it, the files svc.yaml names (SourcePaths, kept by serve/config.ts at each apply), and the line
 * that says what the mode lowers.
 */
import { UsageError } from '../io/errors.js';
import type { SourcePaths } from './source-paths.js';

export const DEFAULT_INSPECT_PORT = 9229;

export const INSPECT_FLAGS = [
  {
    flags: '--inspect [port]',
    description: `let a debugger attach to reactor and transform code on 127.0.0.1 (port ${DEFAULT_INSPECT_PORT}; 0 picks a free one): no permission model and no timeouts in the sandbox, for your own code only`,
  },
] as const;

/** The port of `--inspect` (`true`: the flag without a value), or undefined without the flag. */
export function inspectPort(flag: string | true | undefined): number | undefined {
  if (flag === undefined) return undefined;
  if (flag === true) return DEFAULT_INSPECT_PORT;
  if (!/^\d+$/.test(flag) || Number(flag) > 65535)
    throw new UsageError(`--inspect takes a port from 0 to 65535 (--inspect=9229), not "${flag}".`);
  return Number(flag);
}

/**
 * What `--inspect` makes of serve: the emulator's option (its code under the files svc.yaml names),
 * and svc.yaml's watch options with those files kept up to date. (The emulator says what the mode
 * lowers itself, as a warning at its start.)
 */
export function serveInspect(flag: string | true | undefined, sources: SourcePaths) {
  const port = inspectPort(flag);
  return {
    options: port === undefined ? {} : { inspect: { port, sourcePath: sources.lookup } },
    watching: (watch: boolean, allowOutsideProject: boolean) => ({ watch, allowOutsideProject, sources }),
  };
}
