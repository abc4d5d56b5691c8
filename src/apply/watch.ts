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
  /** The files changed, but the target already matches them. */
  | { type: 'no-changes'; latencyMs: number }
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
  const debounceMs = options.debounceMs ?? 10;
  const configFile = path.resolve(options.cwd, options.file);
  let watcher: FSWatcher | undefined;
  let watched: string[] = [];
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let savedAt: number | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let applied = options.applied ? signatureOf(options.applied) : undefined;
  let failed: Attempt | undefined;
  let lastInvalid: string | undefined;
  let pendingInvalid: NodeJS.Timeout | undefined;
  let ready: Promise<void> = Promise.resolve();

  const emit = (event: WatchEvent) => {
    if (!closed) options.onEvent(event);
  };

  /** Watches `files` (their folders, so a save by rename is seen), replacing the watcher before. */
  const setFiles = async (files: string[]) => {
    if (sameList(files, watched) && watcher) return;
    await watcher?.close();
    if (closed) return;
    watched = files;
    const folders = new Set(files.map((file) => path.dirname(file)));
    const targets = new Set(files);
    const next = watch([...folders], {
      ignoreInitial: true,
      atomic: true,
      depth: 0,
      ignored: (file) => !folders.has(path.resolve(file)) && !targets.has(path.resolve(file)),
    });
    watcher = next;
    const saved = (file: string) => {
      if (closed || watcher !== next || !targets.has(path.resolve(file))) return;
      savedAt ??= performance.now();
      clearTimeout(pendingInvalid);
      clearTimeout(timer);
      timer = setTimeout(() => run(), debounceMs);
    };
    next.on('change', saved).on('add', saved).on('unlink', saved);
    next.on('error', (error) => emit({ type: 'error', message: `watching files failed: ${(error as Error).message}` }));
    ready = new Promise((resolve) => next.once('ready', () => resolve()));
    emit({ type: 'watching', files });
    await ready;
  };

  /** Cycles until no save is left; then looks once more (RECHECK_MS), unless this was that look and it found nothing. */
  const run = (recheck = false) => {
    timer = undefined;
    if (running) {
      again = true;
      return;
    }
    let acted = false;
    running = (async () => {
      do {
        again = false;
        const started = savedAt ?? performance.now();
        savedAt = undefined;
        acted = (await cycle(started, recheck)) || acted;
      } while (again && !closed);
    })()
      .catch((error: unknown) => emit({ type: 'error', message: describeFailure(error) }))
      .finally(() => {
        running = undefined;
        if ((acted || !recheck) && !closed && timer === undefined) timer = setTimeout(() => run(true), RECHECK_MS);
      });
  };

  /** One load, plan and apply; resolves to whether it reported or sent anything. */
  const cycle = async (started: number, recheck: boolean): Promise<boolean> => {
    let desired: Desired;
    try {
      desired = await loadConfig(options.file, loadOptionsOf(options));
      // To `svc apply` an empty svc.yaml declares nothing (and what it made goes); while watching, it
      // is what an editor's save leaves between truncating the file and writing it: never applied.
      if (desired.files[0]?.digest === EMPTY_DIGEST) {
        const shown = displayPath(configFile, options.cwd);
        throw new ApplyError(`${shown} is empty: not applied while watching (\`svc apply\` applies an empty file).`, {
          files: [configFile],
        });
      }
    } catch (error) {
      if (!(error instanceof ApplyError)) throw error;
      // Watch what it names even so: a code file named before it was written is seen once it is.
      if (error.files) await setFiles([...new Set([...watched, ...error.files])]);
      if (recheck && error.message === lastInvalid) return false;
      lastInvalid = error.message;
      // Said only if no save follows within the debounce: an editor's save truncates, then writes.
      clearTimeout(pendingInvalid);
      pendingInvalid = setTimeout(() => emit({ type: 'invalid', message: error.message }), debounceMs);
      return true;
    }
    lastInvalid = undefined;
    if (closed) return false;
    await setFiles(desired.files.map((file) => file.absolute));
    const signature = signatureOf(desired);
    if (signature === applied) return false;
    const attempt = { signature, mtimes: await mtimesOf(desired) };
    if (failed && failed.signature === attempt.signature && failed.mtimes === attempt.mtimes) return false;
    try {
      const { client, prune, targets } = options;
      const planOptions = { client, ...(prune !== undefined && { prune }), ...(targets && { targets }) };
      const prepared = await prepareFor(desired, planOptions);
      for (const message of prepared.plan.warnings) emit({ type: 'warning', message });
      if (closed || prepared.plan.changes.length === 0) await prepared.release();
      if (closed) return false;
      if (prepared.plan.changes.length === 0) {
        applied = signature;
        failed = undefined;
        emit({ type: 'no-changes', latencyMs: Math.round(performance.now() - started) });
        return true;
      }
      const byAddress = new Map(prepared.plan.changes.map((change) => [change.address, change]));
      const result = await prepared.apply({
        onOutcome: (outcome) => {
          const change = byAddress.get(outcome.address)!;
          const latencyMs = Math.round(performance.now() - started);
          emit({ type: 'change', change, outcome, fields: fieldsOf(change), latencyMs });
        },
      });
      if (result.status === 'failed') failed = attempt;
      else [applied, failed] = [signature, undefined];
    } catch (error) {
      failed = attempt;
      if (error instanceof ApplyError) emit({ type: 'invalid', message: error.message });
      else emit({ type: 'error', message: describeFailure(error) });
    }
    return true;
  };

  const initial = options.applied ? options.applied.files.map((file) => file.absolute) : [configFile];
  // A save made after the files were read for the apply but before they were watched is looked for
  // once watching: a look that finds them as applied sends nothing.
  const started = setFiles(initial).then(() => {
    if (options.applied && !closed) run(true);
  });
  return {
    ready: started.then(() => ready),
    async close() {
      closed = true;
      clearTimeout(timer);
      clearTimeout(pendingInvalid);
      await started.catch(() => {});
      // A cycle under way may have replaced the watcher: close whichever is current once it ends.
      await running;
      clearTimeout(timer);
      await watcher?.close();
    },
  };
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
