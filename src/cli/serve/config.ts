/**
 * `svc serve --config svc.yaml`: the file is applied to the emulator through its own HTTP API (the
 * apply engine with an ApiClient, as against a remote server: the emulator learns nothing of
 * svc.yaml), with prune on (in this mode the emulator is the file's to manage), then watched. Each
 * result is reported as an emulator event (`reload`, `error`), so that the serve log and the
 * dashboard word it as they word the emulator's own.
 */
import path from 'node:path';
import {
  ApplyError,
  describeFailure,
  runApply,
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
  const refused = (message: string) =>
    options.report({ type: 'reload', target: shown, file: shown, ok: false, ms: 0, error: message });

  /** One whole apply; resolves to what was applied when all of it was. */
  const applyAll = async (): Promise<Desired | undefined> => {
    const started = performance.now();
    try {
      const { prepared, result } = await runApply({
        client,
        file: options.file,
        cwd: options.cwd,
        env: options.env,
        ...(options.allowOutsideProject && { allowOutsideProject: true }),
        prune: true,
      });
      for (const message of prepared.plan.warnings) options.report({ type: 'warning', message });
      for (const resource of resourcesOf(prepared.desired))
        resources.set(`${resource.kind === 'proxy' ? 'proxies' : `${resource.kind}s`}.${resource.name}`, resource);
      options.onResources?.([...resources.values()]);
      for (const each of result?.outcomes ?? []) outcome(each, Math.round(performance.now() - started));
      return result?.status === 'failed' ? undefined : prepared.desired;
    } catch (error) {
      if (error instanceof ApplyError) refused(error.message);
      else options.report({ type: 'error', message: `applying ${shown} failed: ${describeFailure(error)}` });
      return undefined;
    }
  };

  const onEvent = (event: WatchEvent) => {
    if (event.type === 'change') outcome(event.outcome, event.latencyMs);
    else if (event.type === 'invalid') refused(event.message);
    else if (event.type === 'warning') options.report({ type: 'warning', message: event.message });
    else if (event.type === 'error')
      options.report({ type: 'error', message: `applying ${shown} failed: ${event.message}` });
  };
  const watchFrom = async (applied: Desired | undefined): Promise<ApplyWatcher | undefined> => {
    if (!options.watch) return undefined;
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
  };

  let watcher = await watchFrom(await applyAll());
  let closed = false;
  return {
    async reapply() {
      if (closed) return;
      await watcher?.close();
      const applied = await applyAll();
      if (!closed) watcher = await watchFrom(applied);
    },
    async close() {
      closed = true;
      await watcher?.close();
    },
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

function resourcesOf(desired: Desired): ServeResource[] {
  return [
    ...desired.applications.map((each) => ({ kind: 'application' as const, name: each.name })),
    ...desired.reactors.map((each) => ({ kind: 'reactor' as const, name: each.name })),
    ...desired.proxies.map((each) => ({ kind: 'proxy' as const, name: each.name })),
  ];
}
