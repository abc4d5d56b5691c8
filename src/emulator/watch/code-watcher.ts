import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { EmitEvent } from '../events.js';

/** A file whose contents are code: a reactor's, or a proxy transform's. */
export interface WatchedFile {
  file: string;
  /** What the code is, for the log: `reactor checkout`. */
  label: string;
  /** The contents that are serving now, if known: saving the same text again reloads nothing. */
  loaded?: string;
  /**
   * Loads the new code and makes it current. It rejects when the code does not load, and the
   * version serving before keeps serving (the runtime compiles new code beside the old version first).
   */
  reload(code: string): Promise<void>;
}

export interface CodeWatcherOptions {
  /** Editors write a file in more than one step (truncate, write, rename): a burst is one reload. */
  debounceMs?: number;
  emit: EmitEvent;
}

interface Target {
  spec: WatchedFile;
  loaded: string | undefined;
  /** The save that last failed to load: the same save reported twice (editors and fs.watch do that) is not retried. */
  failed: { code: string; mtimeMs: number } | undefined;
  timer: NodeJS.Timeout | undefined;
  running: Promise<void> | undefined;
  /** A save arrived while a reload was running: read the file once more when it ends. */
  again: boolean;
}

const DEFAULT_DEBOUNCE_MS = 20;
/**
 * chokidar drops a change that comes within 50 ms of the change before it, with no trailing event
 * (its `_emit` throttle): so a file is read once more after that window, and a save made in it is
 * not lost.
 */
const RECHECK_MS = 60;

/**
 * Hot reload: watches code files (chokidar) and reloads each on save. Per file, reloads run one
 * at a time and the latest save wins; every outcome is a `reload` event, a failed one included.
 */
export class CodeWatcher {
  private readonly targets = new Map<string, Target>();
  private readonly watcher: FSWatcher;
  private readonly debounceMs: number;
  private readonly emit: EmitEvent;
  private readonly ready: Promise<void>;
  private closed = false;

  constructor(files: WatchedFile[], options: CodeWatcherOptions) {
    this.debounceMs = options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
    this.emit = options.emit;
    for (const spec of files) {
      this.targets.set(path.resolve(spec.file), { spec, loaded: spec.loaded, failed: undefined, timer: undefined, running: undefined, again: false });
    }
    // The folders are watched, not the files: a file deleted and made again is seen wherever it
    // lies (chokidar watches a removed file again only in some cases). `atomic`: an editor's save
    // by rename (unlink, then add) is reported as one change.
    const folders = new Set([...this.targets.keys()].map((file) => path.dirname(file)));
    this.watcher = watch([...folders], {
      ignoreInitial: true,
      atomic: true,
      depth: 0,
      ignored: (file) => !folders.has(path.resolve(file)) && !this.targets.has(path.resolve(file)),
    });
    this.watcher.on('change', (file) => this.saved(file));
    this.watcher.on('add', (file) => this.saved(file));
    this.watcher.on('unlink', (file) => {
      const target = this.targets.get(path.resolve(file));
      if (target) this.emit({ type: 'warning', message: `${target.spec.file} was deleted; the ${target.spec.label} keeps its last loaded code.` });
    });
    this.watcher.on('error', (error) => this.emit({ type: 'error', message: `watching code files failed: ${(error as Error).message}` }));
    this.ready = files.length === 0 ? Promise.resolve() : new Promise((resolve) => this.watcher.once('ready', () => resolve()));
  }

  /** Resolves once every file is watched: a save after this is seen. */
  whenReady(): Promise<void> {
    return this.ready;
  }

  /** Stops watching; waits for a reload under way to end. */
  async close(): Promise<void> {
    this.closed = true;
    for (const target of this.targets.values()) clearTimeout(target.timer);
    await this.watcher.close();
    await Promise.all([...this.targets.values()].map((target) => target.running));
  }

  private saved(file: string): void {
    const target = this.targets.get(path.resolve(file));
    if (!target || this.closed) return;
    clearTimeout(target.timer);
    target.timer = setTimeout(() => this.run(target, false), this.debounceMs);
  }

  /** Reloads until no save is left; then looks once more (RECHECK_MS), unless this was that look and it found nothing. */
  private run(target: Target, recheck: boolean): void {
    target.timer = undefined;
    if (target.running) {
      target.again = true;
      return;
    }
    target.running = (async () => {
      let attempted = false;
      do {
        target.again = false;
        attempted = (await this.reload(target)) || attempted;
      } while (target.again && !this.closed);
      if ((attempted || !recheck) && !this.closed && target.timer === undefined) {
        target.timer = setTimeout(() => this.run(target, true), RECHECK_MS);
      }
    })()
      // Only `emit` (the caller's log) can throw here, and then there is nowhere left to report
      // to: the watcher goes on rather than end the process with an unhandled rejection.
      .catch(() => {})
      .finally(() => (target.running = undefined));
  }

  /** Reads the file and loads it when it is new; resolves to whether it tried to load. */
  private async reload(target: Target): Promise<boolean> {
    const { spec } = target;
    const started = performance.now();
    let code: string;
    let mtimeMs: number;
    try {
      [code, { mtimeMs }] = await Promise.all([readFile(spec.file, 'utf8'), stat(spec.file)]);
    } catch (error) {
      // Gone between the event and the read (a save by rename in progress): the next event reloads.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      this.emit({ type: 'reload', target: spec.label, file: spec.file, ok: false, ms: 0, error: `cannot read ${spec.file}: ${(error as Error).message}` });
      return false;
    }
    if (code === target.loaded || (code === target.failed?.code && mtimeMs === target.failed.mtimeMs)) return false;
    try {
      await spec.reload(code);
      target.loaded = code;
      target.failed = undefined;
      this.emit({ type: 'reload', target: spec.label, file: spec.file, ok: true, ms: round(performance.now() - started) });
    } catch (error) {
      target.failed = { code, mtimeMs };
      this.emit({ type: 'reload', target: spec.label, file: spec.file, ok: false, ms: round(performance.now() - started), error: (error as Error).message });
    }
    return true;
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
