/**
 * A debugger attached to the sandbox (`svc serve --inspect`, RuntimeOptions.inspect): the source URL
 * each code version is compiled under, and the one inspector port, held by one process at a time.
 */
import { createServer } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { InspectOptions, LoadSpec } from './types.js';

/** The host a sandbox's inspector listens on: this machine only. */
export const INSPECT_HOST = '127.0.0.1';

/**
 * The `file://` URL of the user's own file of a code version, where a debugger's breakpoints bind
 * (Chrome DevTools and VS Code both match a script's URL to the file they show); undefined when no
 * file is known (the code is compiled under its file name, as without a debugger).
 */
export function sourceUrlOf(spec: LoadSpec, inspect: InspectOptions | undefined): string | undefined {
  if (!inspect?.sourcePath || !spec.source) return undefined;
  let file: string | undefined;
  try {
    file = inspect.sourcePath(spec.source.kind, spec.source.name, spec.source.which);
  } catch {
    return undefined;
  }
  return typeof file === 'string' && path.isAbsolute(file) ? pathToFileURL(file).href : undefined;
}

/**
 * The inspector's port is one process's at a time: a process that replaces another (a crash, a
 * process stopped to make room) starts only once the one before has exited, else its inspector
 * would find the port taken and Node would run on without one.
 */
export class InspectorPort {
  private readonly exiting = new Set<Promise<void>>();

  /** A process went: its port is free once it has exited. */
  released(exited: Promise<void>): void {
    this.exiting.add(exited);
    void exited.then(() => this.exiting.delete(exited));
  }

  /** Resolves once every process that went has exited. */
  async settled(): Promise<void> {
    while (this.exiting.size > 0) await Promise.all(this.exiting);
  }
}

/** What a start with a debugger says, once: what the mode lowers, and where to attach. */
export function inspectNotice(port: number): string {
  return (
    `Inspect mode: the sandbox runs without Node's permission model and with no timeouts (your code can read files and start processes as you): for your own code only. ` +
    `Debugger on ${INSPECT_HOST}:${port} (its ws:// URL at http://${INSPECT_HOST}:${port}/json/list): chrome://inspect, or VS Code "Attach" to port ${port}.`
  );
}

/** A port free on 127.0.0.1 now (for `inspect.port` 0: a debugger needs a port that stays the same). */
export function freeInspectPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, INSPECT_HOST, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
