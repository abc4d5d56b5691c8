/**
 * `svc serve --config svc.yaml`: the file is applied to the emulator through its own HTTP API (the
 * apply engine with an ApiClient, as against a remote server: the emulator learns nothing of
 * svc.yaml), with prune on (in this mode the emulator is the file's to manage), then watched. Each
 * result is reported as an emulator event (`reload`, `error`), so that the serve log and the
 * dashboard word it as they word the emulator's own.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import {
  ApplyError,
  describeFailure,
  loadConfig,
  prepareApply,
  watchConfig,
  type ApplyWatcher,
  type ChangeOutcome,
  type Desired,
  type WatchEvent,
} from '../../apply/index.js';
import { ApiClient } from '../../client/index.js';
import type { EmulatorEventInit } from '../../api/events.js';
import type { ServeResource } from '../../ui/serve-types.js';

export interface ServeConfigOptions {
  /** svc.yaml, relative to `cwd`. */
  file: string;
  cwd: string;
  env: Record<string, string | undefined>;
  /** Read files svc.yaml names outside its folder too (`--allow-outside-project`). */
  allowOutsideProject?: boolean;
  /** The emulator's own URL and the bootstrap tenant's management key. */
  url: string;
  managementKey: string;
  watch: boolean;
  report: (event: EmulatorEventInit) => void;
  /** What svc.yaml puts on the emulator, after each apply that changed it. */
  onResources?: (resources: ServeResource[]) => void;
  /** `--inspect`: told each svc.yaml an apply loads, before its changes go (the code's own files). */
  sources?: { update(desired: Desired): void };
  /**
   * Aborted (Ctrl-C while serve starts): the first apply starts no further change (the one under
   * way ends, as apply writes and journals each step whole) and nothing is watched.
   */
  signal?: AbortSignal;
}

export interface ServeConfig {
  /** Applies the file again, whole (the dashboard's `r`); reports as a save does. */
  reapply(): Promise<void>;
  close(): Promise<void>;
}

/** Applies the file, then (unless `watch` is off) applies each save of it or of a file it names. */
export async function startServeConfig(options: ServeConfigOptions): Promise<ServeConfig> {
  const client = new ApiClient({ baseUrl: options.url, managementKey: options.managementKey });
  const shown = path.relative(options.cwd, path.resolve(options.cwd, options.file)) || options.file;
  const resources = new Map<string, ServeResource>();
  const outcome = (result: ChangeOutcome, latencyMs: number) => {
    const ok = result.status === 'applied';
    options.report({
      type: 'reload',
      target: `${result.address} ${ok ? doneOf(result.action) : result.action}`,
      file: shown,
      ok,
      ms: latencyMs,
      ...(!ok && { error: result.error ?? result.status }),
    });
    if (!ok) return;
    if (result.action === 'delete') resources.delete(result.address);
    else resources.set(result.address, resourceOf(result.address));
    options.onResources?.([...resources.values()]);
  };
  const { refused, refusedAtStart, held, reportNoChanges } = reports(options, shown);

  /**
   * One whole apply (`first`: the start's); resolves to what was applied when all of it was. A file
   * that does not load holds back its own resource only (load.ts), as a save while watching does.
   */
  const applyAll = async (first: boolean): Promise<Desired | undefined> => {
    const started = performance.now();
    try {
      if (options.signal?.aborted) return undefined;
      const prepared = await prepareApply({
        client,
        file: options.file,
        cwd: options.cwd,
        env: options.env,
        ...(options.allowOutsideProject && { allowOutsideProject: true }),
        holdBroken: true,
        prune: true,
      });
      if (options.signal?.aborted) {
        await prepared.release();
        return undefined;
      }
      options.sources?.update(prepared.desired);
      const result = await prepared.apply(options.signal ? { signal: options.signal } : {});
      for (const message of prepared.plan.warnings) options.report({ type: 'warning', message });
      for (const each of prepared.plan.held ?? []) held(each);
      for (const resource of resourcesOf(prepared))
        resources.set(`${resource.kind === 'proxy' ? 'proxies' : `${resource.kind}s`}.${resource.name}`, resource);
      options.onResources?.([...resources.values()]);
      const interrupted = (each: ChangeOutcome) => each.status === 'skipped' && options.signal?.aborted === true;
      const skipped = result.outcomes.filter(interrupted).length;
      for (const each of result.outcomes.filter((one) => !interrupted(one)))
        outcome(each, Math.round(performance.now() - started));
      // `r` with nothing to change says so (a start with nothing to change is said by the resources shown).
      if (!first && result.status === 'no-changes') reportNoChanges(Math.round(performance.now() - started));
      if (skipped > 0)
        options.report({
          type: 'warning',
          message: `${shown}: interrupted, ${skipped} change${skipped === 1 ? '' : 's'} not applied.`,
        });
      return result.status === 'failed' ? undefined : prepared.desired;
    } catch (error) {
      if (error instanceof ApplyError) (first ? refusedAtStart : refused)(error.message);
      else options.report({ type: 'error', message: `applying ${shown} failed: ${describeFailure(error)}` });
      return undefined;
    }
  };

  const refreshSources = sourceRefresher(options);
  const onEvent = (event: WatchEvent) => {
    if (event.type === 'change') refreshSources();
    if (event.type === 'change') outcome(event.outcome, event.latencyMs);
    else if (event.type === 'held') held(event);
    // The save that mends a refused one is said, even when it leaves things as they were.
    else if (event.type === 'no-changes' && event.fixed) reportNoChanges(event.latencyMs);
    else if (event.type === 'invalid') refused(event.message);
    else if (event.type === 'warning') options.report({ type: 'warning', message: event.message });
    else if (event.type === 'error')
      options.report({ type: 'error', message: `applying ${shown} failed: ${event.message}` });
  };
  const watchFrom = (applied: Desired | undefined) => watchApplied(options, client, applied, onEvent);

  let watcher = await watchFrom(await applyAll(true));
  let closed = false;
  return {
    async reapply() {
      if (closed) return;
      await watcher?.close();
      const applied = await applyAll(false);
      if (!closed) watcher = await watchFrom(applied);
    },
    async close() {
      closed = true;
      await watcher?.close();
    },
  };
}

/** Watches svc.yaml as `applied` (unless `watch` is off or serve is stopping), once watching. */
async function watchApplied(
  options: ServeConfigOptions,
  client: ApiClient,
  applied: Desired | undefined,
  onEvent: (event: WatchEvent) => void,
): Promise<ApplyWatcher | undefined> {
  if (!options.watch || options.signal?.aborted) return undefined;
  const { file, cwd, env, allowOutsideProject } = options;
  const outside = allowOutsideProject && { allowOutsideProject };
  const watcher = watchConfig({
    client,
    file,
    cwd,
    env,
    ...outside,
    prune: true,
    ...(applied && { applied }),
    onEvent,
  });
  await watcher.ready;
  return watcher;
}

/** How an apply's refusals, held resources and no-changes are reported, as events. */
function reports({ report, watch }: Pick<ServeConfigOptions, 'report' | 'watch'>, shown: string) {
  return {
    refused: (message: string) =>
      report({ type: 'reload', target: shown, file: shown, ok: false, ms: 0, error: message }),
    // At start no code of svc.yaml's serves yet (a reload's words would say the previous one does).
    refusedAtStart: (message: string) =>
      report({
        type: 'error',
        message: `${shown} was not applied${watch ? ' (a save that mends it applies it)' : ''}: ${message}`,
      }),
    /** A reactor or proxy held back (a file it names does not load): it keeps what the emulator has, or is not made. */
    held: ({ address, message, kept }: { address: string; message: string; kept: boolean }) => {
      if (kept) report({ type: 'reload', target: address, file: shown, ok: false, ms: 0, error: message });
      else report({ type: 'warning', message: `${address} held back, not created: ${message}` });
    },
    reportNoChanges: (ms: number) =>
      report({ type: 'reload', target: `${shown} (no changes)`, file: shown, ok: true, ms }),
  };
}

/**
 * A save applied while watching may name other files (a reactor added, a file renamed): svc.yaml is
 * read again, for --inspect (whose emulator compiles the code under them from its next call) and for
 * serve's error places. Only when svc.yaml itself changed: a save of a code file (the inner loop)
 * names no other file, and one save's several changes read it once.
 */
function sourceRefresher({ file, cwd, env, allowOutsideProject, sources }: ServeConfigOptions): () => void {
  if (!sources) return () => {};
  let read: string | undefined;
  return () => {
    void stat(path.resolve(cwd, file))
      .then(
        (found) => {
          const stamp = `${found.mtimeMs}:${found.size}`;
          if (stamp === read) return;
          read = stamp;
          return loadConfig(file, {
            cwd,
            env,
            holdBroken: true,
            ...(allowOutsideProject && { allowOutsideProject }),
          }).then((desired) => sources.update(desired));
        },
        // A file that does not load (or is gone) is said by the apply's own load; the paths known stay as they were.
      )
      .catch(() => {});
  };
}

const DONE: Record<string, string> = {
  create: 'created',
  update: 'updated',
  rename: 'renamed',
  adopt: 'adopted',
  delete: 'deleted',
};
const doneOf = (action: string) => DONE[action] ?? action;

function resourceOf(address: string): ServeResource {
  const [kinds = '', name = address] = address.split('.', 2);
  const kind = kinds === 'reactors' ? 'reactor' : kinds === 'proxies' ? 'proxy' : 'application';
  return { kind, name };
}

/** What svc.yaml has on the emulator after a plan: what it names, and what it holds back that the emulator keeps. */
function resourcesOf({ desired, plan }: { desired: Desired; plan: { held?: { address: string; kept: boolean }[] } }) {
  return [
    ...desired.applications.map((each) => ({ kind: 'application' as const, name: each.name })),
    ...desired.reactors.map((each) => ({ kind: 'reactor' as const, name: each.name })),
    ...desired.proxies.map((each) => ({ kind: 'proxy' as const, name: each.name })),
    ...(plan.held ?? []).filter((each) => each.kept).map((each) => resourceOf(each.address)),
  ];
}
