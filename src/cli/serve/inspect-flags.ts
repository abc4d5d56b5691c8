/**
 * `svc serve --inspect[=PORT]`: a debugger (Chrome DevTools, VS Code) attaches to the sandbox on
 * 127.0.0.1, with breakpoints in the user's own files: the flag, the emulator's `inspect` option made
 * of it, the files svc.yaml names (SourcePaths, kept by serve/config.ts at each apply), and the line
 * that says what the mode lowers.
 */
import path from 'node:path';
import { UsageError } from '../io/errors.js';

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

/** What a code file of svc.yaml is, in the terms the emulator asks in (inspect.sourcePath). */
interface NamedCode {
  name: string;
  code?: { path: string };
  request_transform?: { path: string } | null;
  response_transform?: { path: string } | null;
}

/**
 * The user's own file of each reactor and transform, by the name svc.yaml gives it: what the
 * emulator compiles code under, so that breakpoints set in the file bind. Updated from each apply
 * (before its changes are sent); a name it never saw has no file (the code keeps its file name).
 */
export class SourcePaths {
  private readonly files = new Map<string, string>();

  /** svc.yaml as loaded for an apply (apply's Desired): its folder, reactors and proxies. */
  update(desired: { dir: string; reactors: NamedCode[]; proxies: NamedCode[] }): void {
    const put = (key: string, ref: { path: string } | null | undefined) => {
      if (ref) this.files.set(key, path.resolve(desired.dir, ref.path));
    };
    for (const reactor of desired.reactors) put(`reactor\u0000${reactor.name}`, reactor.code);
    for (const proxy of desired.proxies) {
      put(`request\u0000${proxy.name}`, proxy.request_transform);
      put(`response\u0000${proxy.name}`, proxy.response_transform);
    }
  }

  /** The emulator's `inspect.sourcePath`. */
  readonly lookup = (kind: 'reactor' | 'transform', name: string, which?: 'request' | 'response') =>
    this.files.get(`${kind === 'reactor' ? 'reactor' : (which ?? 'request')}\u0000${name}`);
}

/**
 * What `--inspect` makes of serve: the emulator's option (its code under the files svc.yaml names),
 * and svc.yaml's watch options with those files kept up to date. (The emulator says what the mode
 * lowers itself, as a warning at its start.)
 */
export function serveInspect(flag: string | true | undefined) {
  const port = inspectPort(flag);
  const sources = port === undefined ? undefined : new SourcePaths();
  return {
    options: sources ? { inspect: { port: port!, sourcePath: sources.lookup } } : {},
    watching: (watch: boolean, allowOutsideProject: boolean) => ({ watch, allowOutsideProject, sources }),
  };
}
