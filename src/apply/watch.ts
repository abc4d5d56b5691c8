/**
 * `svc apply --watch` (and `svc serve --config`): watches svc.yaml and every file it names; a save
 * loads the config again, plans against the target and applies only what changed (a saved code
 * file is one PATCH of the code). A save whose contents are what was last applied does nothing; a
 * file that does not load is reported at its path:line:column and nothing is sent. One cycle runs
 * at a time; saves meanwhile make one more. Events, not log lines: the caller words them.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import { ApplyError } from './errors.js';
import type { ChangeOutcome } from './execute.js';
import { loadConfig } from './load.js';
import { displayPath, sha256 } from './sources.js';
import { describeFailure } from './execute.js';
import { loadOptionsOf, prepareFor, type ApplyOptions } from './session.js';
import type { Change, Desired } from './types.js';

export type WatchEvent =
  /** Watching these files (svc.yaml first); sent again when svc.yaml names other files. */
  | { type: 'watching'; files: string[] }
  /** One change applied (or not), with the time from the save to its end. */
  | { type: 'change'; change: Change; outcome: ChangeOutcome; fields: string[]; latencyMs: number }
  /**
   * The files changed, but the target already matches them. `fixed`: they load again after a problem
   * was said, and are as last applied (a broken save undone).
   */
  | { type: 'no-changes'; latencyMs: number; fixed?: boolean }
  /**
   * A reactor or proxy held back: a file it names does not load (`message`: path:line:column and why).
   * `kept`: the target has it and keeps its last good code; otherwise it is not created. The rest applies.
   */
  | { type: 'held'; address: string; message: string; kept: boolean }
  /** svc.yaml or a file it names does not load: `message` names path:line[:column]; nothing was sent. */
  | { type: 'invalid'; message: string }
  /** Planning or applying failed as a whole (the target cannot be reached...). */
  | { type: 'error'; message: string }
  /** What the plan warns of (a key an interrupted apply lost): said before its changes. */
  | { type: 'warning'; message: string };

export interface WatchOptions extends ApplyOptions {
  onEvent: (event: WatchEvent) => void;
  /** svc.yaml as last applied: saves that leave every file as it was do nothing. */
  applied?: Desired;
  /**
   * Editors save in several writes: a burst is one cycle (default 10 ms). Short on purpose (the inner
   * loop's figure): a write caught half-way loads as an error and is said only if no write follows within
   * the debounce; empty code never loads; the last write of the burst is applied.
   */
  debounceMs?: number;
}

export interface ApplyWatcher {
  /** Resolves once the files are watched: a save after this is seen. */
  ready: Promise<void>;
  /** Stops watching; waits for a cycle under way to end. */
  close(): Promise<void>;
}

/** A cycle that failed on these exact files (contents and times) is not tried again until one changes. */
interface Attempt {
  signature: string;
  mtimes: string;
}

/**
 * chokidar drops a change that comes within 50 ms of the one before it on the same file, with no
 * trailing event (its throttle): so the files are read once more after that window, and a save made
 * in it is not lost (a read that finds nothing new sends nothing).
 */
const RECHECK_MS = 60;
/** The digest of a file of no bytes. */
const EMPTY_DIGEST = sha256('');

export function watchConfig(options: WatchOptions): ApplyWatcher {
  const state = new ConfigWatch(options);
  return { ready: state.ready, close: () => state.close() };
}

/**
 * One watch's state, each field with the transitions that change it: the watcher and its files
 * (setFiles), a burst of saves (saved -> run), the cycle under way (run, cycle), what was applied and
 * what failed (apply), and an invalid file said once (load).
 */
class ConfigWatch {
  /** Resolves once the first files are watched and the watcher is ready. */
  readonly ready: Promise<void>;
  private readonly debounceMs: number;
  private readonly configFile: string;
  private closed = false;
  // The watcher, the files it watches, and when it is ready.
  private watcher: FSWatcher | undefined;
  private watched: string[] = [];
  private watcherReady: Promise<void> = Promise.resolve();
  /** The first setFiles (the files of the apply before, or svc.yaml). */
  private readonly started: Promise<void>;
  // A burst: the debounce (or recheck) timer, and when its first save came.
  private timer: NodeJS.Timeout | undefined;
  private savedAt: number | undefined;
  // The cycle under way, and whether a save came while it ran.
  private running: Promise<void> | undefined;
  private again = false;
  // The signature last applied, and the last attempt that failed.
  private applied: string | undefined;
  private failed: Attempt | undefined;
  // The last invalid message, and the timer that says it once no save follows.
  private lastInvalid: string | undefined;
  private pendingInvalid: NodeJS.Timeout | undefined;
  /** A problem was said (an invalid file, a failed apply) and no apply since: the next good one says so. */
  private broken = false;

  constructor(private readonly options: WatchOptions) {
    this.debounceMs = options.debounceMs ?? 10;
    this.configFile = path.resolve(options.cwd, options.file);
    this.applied = options.applied ? signatureOf(options.applied) : undefined;
    const initial = options.applied ? options.applied.files.map((file) => file.absolute) : [this.configFile];
    // A save made after the files were read for the apply but before they were watched is looked for
    // once watching: a look that finds them as applied sends nothing.
    this.started = this.setFiles(initial).then(() => {
      if (options.applied && !this.closed) this.run(true);
    });
    this.ready = this.started.then(() => this.watcherReady);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    clearTimeout(this.pendingInvalid);
    await this.started.catch(() => {});
    // A cycle under way may have replaced the watcher: close whichever is current once it ends.
    await this.running;
    clearTimeout(this.timer);
    await this.watcher?.close();
  }

  private emit(event: WatchEvent): void {
    if (!this.closed) this.options.onEvent(event);
  }

  /** Watches `files` (their folders, so a save by rename is seen), replacing the watcher before. */
  private async setFiles(files: string[]): Promise<void> {
    if (sameList(files, this.watched) && this.watcher) return;
    await this.watcher?.close();
    if (this.closed) return;
    this.watched = files;
    const folders = new Set(files.map((file) => path.dirname(file)));
    const targets = new Set(files);
    const next = watch([...folders], {
      ignoreInitial: true,
      atomic: true,
      depth: 0,
      ignored: (file) => !folders.has(path.resolve(file)) && !targets.has(path.resolve(file)),
    });
    this.watcher = next;
    const saved = (file: string) => {
      if (!this.closed && this.watcher === next && targets.has(path.resolve(file))) this.saved();
    };
    next.on('change', saved).on('add', saved).on('unlink', saved);
    next.on('error', (error) =>
      this.emit({ type: 'error', message: `watching files failed: ${(error as Error).message}` }),
    );
    this.watcherReady = new Promise((resolve) => next.once('ready', () => resolve()));
    this.emit({ type: 'watching', files });
    await this.watcherReady;
  }

  /** A save of a watched file: the burst's cycle runs once no save has come for the debounce. */
  private saved(): void {
    this.savedAt ??= performance.now();
    clearTimeout(this.pendingInvalid);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.run(), this.debounceMs);
  }

  /** Cycles until no save is left; then looks once more (RECHECK_MS), unless this was that look and it found nothing. */
  private run(recheck = false): void {
    this.timer = undefined;
    if (this.running) {
      this.again = true;
      return;
    }
    let acted = false;
    this.running = (async () => {
      do {
        this.again = false;
        const started = this.savedAt ?? performance.now();
        this.savedAt = undefined;
        acted = (await this.cycle(started, recheck)) || acted;
      } while (this.again && !this.closed);
    })()
      .catch((error: unknown) => this.emit({ type: 'error', message: describeFailure(error) }))
      .finally(() => {
        this.running = undefined;
        if ((acted || !recheck) && !this.closed && this.timer === undefined) {
          this.timer = setTimeout(() => this.run(true), RECHECK_MS);
        }
      });
  }

  /** One load, plan and apply; resolves to whether it reported or sent anything. */
  private async cycle(started: number, recheck: boolean): Promise<boolean> {
    const desired = await this.load(recheck);
    if (typeof desired === 'boolean') return desired;
    if (this.closed) return false;
    await this.setFiles([...desired.files.map((file) => file.absolute), ...(desired.unread ?? [])]);
    const signature = signatureOf(desired);
    if (signature === this.applied) return this.fixed(started);
    const attempt = { signature, mtimes: await mtimesOf(desired) };
    if (this.failed && this.failed.signature === attempt.signature && this.failed.mtimes === attempt.mtimes) {
      return false;
    }
    try {
      return await this.apply(desired, attempt, started);
    } catch (error) {
      this.failed = attempt;
      this.broken = true;
      if (error instanceof ApplyError) this.emit({ type: 'invalid', message: error.message });
      else this.emit({ type: 'error', message: describeFailure(error) });
      return true;
    }
  }

  /** Files as last applied: nothing to send, but a problem said since is over (a broken save undone). */
  private fixed(started: number): boolean {
    if (!this.broken) return false;
    this.broken = false;
    this.failed = undefined;
    this.emit({ type: 'no-changes', latencyMs: Math.round(performance.now() - started), fixed: true });
    return true;
  }

  /**
   * svc.yaml and its files as loaded; or, when they do not load, whether that was reported (an
   * invalid file is said once the debounce passes with no save, and a recheck does not say it again).
   */
  private async load(recheck: boolean): Promise<Desired | boolean> {
    try {
      // A broken code file holds back only its own resource: the rest of a save applies.
      const desired = await loadConfig(this.options.file, { ...loadOptionsOf(this.options), holdBroken: true });
      // To `svc apply` an empty svc.yaml declares nothing (and what it made goes); while watching, it
      // is what an editor's save leaves between truncating the file and writing it: never applied.
      if (desired.files[0]?.digest === EMPTY_DIGEST) {
        const shown = displayPath(this.configFile, this.options.cwd);
        throw new ApplyError(`${shown} is empty: not applied while watching (\`svc apply\` applies an empty file).`, {
          files: [this.configFile],
        });
      }
      this.lastInvalid = undefined;
      return desired;
    } catch (error) {
      if (!(error instanceof ApplyError)) throw error;
      // Watch what it names even so: a code file named before it was written is seen once it is.
      if (error.files) await this.setFiles([...new Set([...this.watched, ...error.files])]);
      if (recheck && error.message === this.lastInvalid) return false;
      this.lastInvalid = error.message;
      // Said only if no save follows within the debounce: an editor's save truncates, then writes.
      clearTimeout(this.pendingInvalid);
      this.pendingInvalid = setTimeout(() => {
        this.broken = true;
        this.emit({ type: 'invalid', message: error.message });
      }, this.debounceMs);
      return true;
    }
  }

  /** Plans against the target and applies; records what was applied or what failed. */
  private async apply(desired: Desired, attempt: Attempt, started: number): Promise<boolean> {
    const { client, prune, targets } = this.options;
    const planOptions = { client, ...(prune !== undefined && { prune }), ...(targets && { targets }) };
    const prepared = await prepareFor(desired, planOptions);
    for (const message of prepared.plan.warnings) this.emit({ type: 'warning', message });
    for (const { address, message, kept } of prepared.plan.held ?? [])
      this.emit({ type: 'held', address, message, kept });
    if (this.closed || prepared.plan.changes.length === 0) await prepared.release();
    if (this.closed) return false;
    if (prepared.plan.changes.length === 0) {
      this.applied = attempt.signature;
      this.failed = undefined;
      const fixed = this.broken;
      this.broken = false;
      this.emit({ type: 'no-changes', latencyMs: Math.round(performance.now() - started), ...(fixed && { fixed }) });
      return true;
    }
    const byAddress = new Map(prepared.plan.changes.map((change) => [change.address, change]));
    const result = await prepared.apply({
      onOutcome: (outcome) => {
        const change = byAddress.get(outcome.address)!;
        const latencyMs = Math.round(performance.now() - started);
        this.emit({ type: 'change', change, outcome, fields: fieldsOf(change), latencyMs });
      },
    });
    if (result.status === 'failed') [this.failed, this.broken] = [attempt, true];
    else [this.applied, this.failed, this.broken] = [attempt.signature, undefined, false];
    return true;
  }
}

/** The fields a change touches, as a watch line says them: `code`, `configuration`. */
function fieldsOf(change: Change): string[] {
  return [...new Set(change.diffs.map((diff) => diff.field.split('.')[0]!))];
}

function signatureOf(desired: Desired): string {
  return desired.files.map((file) => `${file.absolute}\u0000${file.digest}`).join('\n');
}

async function mtimesOf(desired: Desired): Promise<string> {
  const times = await Promise.all(
    desired.files.map((file) =>
      stat(file.absolute).then(
        (stats) => stats.mtimeMs,
        () => 0,
      ),
    ),
  );
  return times.join(',');
}

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}
