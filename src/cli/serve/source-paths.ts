/**
 * The user's own file of each reactor and transform, by the name svc.yaml gives it, kept by
 * serve/config.ts at each apply (before its changes are sent). Two uses: the emulator compiles code
 * under these files for a debugger (`--inspect`), and serve's lines say a runtime error's place in
 * the user's file (`reactors/charge.js:4:12`), not in the server's name for it (`charge.js:4:12`).
 */
import path from 'node:path';
import { reactorFileName, transformFileName } from '../../api/code-files.js';
import type { EmulatorEvent } from '../../api/events.js';

/** What a code file of svc.yaml is, in the terms the emulator asks in (inspect.sourcePath). */
interface NamedCode {
  name: string;
  code?: { path: string };
  request_transform?: { path: string } | null;
  response_transform?: { path: string } | null;
}

/** The members of an event that may hold a stack or a `file:line:column`. */
const PLACED_FIELDS = ['message', 'stack', 'text', 'error'] as const;

export class SourcePaths {
  private readonly files = new Map<string, string>();
  /** The server's file name -> the file as the user reads it (relative to serve's folder). */
  private readonly shown = new Map<string, string>();
  private pattern: RegExp | undefined;

  constructor(private readonly cwd: string) {}

  /** svc.yaml as loaded for an apply (apply's Desired): its folder, reactors and proxies. */
  update(desired: { dir: string; reactors: NamedCode[]; proxies: NamedCode[] }): void {
    this.files.clear();
    this.shown.clear();
    const put = (key: string, serverFile: string, ref: { path: string } | null | undefined) => {
      if (!ref) return;
      const file = path.resolve(desired.dir, ref.path);
      this.files.set(key, file);
      this.shown.set(serverFile, path.relative(this.cwd, file) || file);
    };
    for (const reactor of desired.reactors)
      put(`reactor\u0000${reactor.name}`, reactorFileName(reactor.name), reactor.code);
    for (const proxy of desired.proxies) {
      put(`request\u0000${proxy.name}`, transformFileName(proxy.name, 'request'), proxy.request_transform);
      put(`response\u0000${proxy.name}`, transformFileName(proxy.name, 'response'), proxy.response_transform);
    }
    const names = [...this.shown.keys()].map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    // A server file name where a place is given (`charge.js:4`), not inside a longer name (`recharge.js`).
    this.pattern = names.length === 0 ? undefined : new RegExp(`(?<![\\w.-])(${names.join('|')})(?=:\\d)`, 'g');
  }

  /** The emulator's `inspect.sourcePath`. */
  readonly lookup = (kind: 'reactor' | 'transform', name: string, which?: 'request' | 'response') =>
    this.files.get(`${kind === 'reactor' ? 'reactor' : (which ?? 'request')}\u0000${name}`);

  /** `text` with each place in a server file name said in the user's file. */
  localize(text: string): string {
    if (!this.pattern) return text;
    return text.replace(this.pattern, (serverFile) => this.shown.get(serverFile) ?? serverFile);
  }

  /** A listener of the emulator's events that hands `publish` each one said in the user's files. */
  localized(publish: (event: EmulatorEvent) => void): (event: EmulatorEvent) => void {
    return (event) => publish(this.localizeEvent(event));
  }

  /** An event whose message or stack names places in code, said in the user's files. */
  readonly localizeEvent = (event: EmulatorEvent): EmulatorEvent => {
    if (!this.pattern) return event;
    let changed: Record<string, unknown> | undefined;
    for (const field of PLACED_FIELDS) {
      const value = (event as Record<string, unknown>)[field];
      if (typeof value !== 'string') continue;
      const local = this.localize(value);
      if (local !== value) (changed ??= { ...event })[field] = local;
    }
    return (changed as EmulatorEvent | undefined) ?? event;
  };
}
