/**
 * Runs a plan through the API client: the one module of apply that changes the target. Changes
 * run as their dependencies allow, several at once; one that fails skips what depends on it and
 * lets the others finish. Request bodies come from src/requests, as the CLI's do.
 */
import type { OutcomeView } from '../api/plan.js';
import type { ApiClient } from '../client/index.js';
import { ApiError, ConnectionError } from '../client/index.js';
import {
  configurationPatch,
  createApplicationBody,
  createProxyBody,
  createReactorBody,
  patchProxyBody,
  patchReactorBody,
  updateApplicationBody,
} from '../requests/index.js';
import { contentHash } from './compare.js';
import type { CreatedKey } from './keys.js';
import { wantedApplication, wantedProxy, wantedReactor, type AppRef } from './specs.js';
import { addressOf, type Address, type Change, type Desired, type FieldDiff, type Plan } from './types.js';

/** How one change went (api/plan.ts's OutcomeView), with the id of what it made or changed. */
export interface ChangeOutcome extends OutcomeView {
  id?: string;
}

export interface Execution {
  /** In the plan's order. */
  outcomes: ChangeOutcome[];
  /** Ids of the desired resources that exist now, by address. */
  ids: Record<Address, string>;
  /** contentHash() of each resource as applied, for the state. */
  hashes: Record<Address, string>;
  /** Keys of the Applications created: for .svc/keys.json only. */
  keys: CreatedKey[];
}

export interface ExecuteOptions {
  client: ApiClient;
  /** Changes in flight at once (default 4). */
  concurrency?: number;
  /** Each outcome as it happens (progress lines, watch). */
  onOutcome?: (outcome: ChangeOutcome) => void;
  /** Aborted: no further change starts; those not started are skipped. */
  signal?: AbortSignal;
  /**
   * Told of each Application create, and awaited: before its request is sent (a journal), after the
   * server refused it, and once the key is back (saved there before the change counts as applied, so
   * nothing that follows starts before the key is safe). A throw of `creating` or `created` fails
   * the change and starts no further change: an apply does not go on when it cannot keep a key.
   */
  keys?: KeyKeeper;
}

export interface KeyKeeper {
  creating(name: string): Promise<void>;
  refused(name: string): Promise<void>;
  /** `hash` is the Application's contentHash as created, for the state. */
  created(key: CreatedKey, hash: string): Promise<void>;
}

export async function executePlan(plan: Plan, desired: Desired, options: ExecuteOptions): Promise<Execution> {
  const ids: Record<Address, string> = { ...plan.ids };
  const hashes: Record<Address, string> = {};
  const keys: CreatedKey[] = [];
  const outcomes = new Map<Address, ChangeOutcome>();
  const byAddress = new Map(plan.changes.map((change) => [change.address, change]));
  const appRef: AppRef = (name) => (name === null ? null : (ids[addressOf('applications', name)] ?? null));
  const limit = semaphore(options.concurrency ?? 4);
  const running = new Map<Address, Promise<boolean>>();
  /** Why no further change starts, once a key could not be kept. */
  let halted: string | undefined;
  const keeper: Keeper = {
    ...(options.keys && { keys: options.keys }),
    hashOf: (change) => hashOf(change, desired, appRef),
    halt: (reason) => {
      halted ??= reason;
    },
  };

  const settle = (outcome: ChangeOutcome): boolean => {
    outcomes.set(outcome.address, outcome);
    options.onOutcome?.(outcome);
    return outcome.status === 'applied';
  };
  const run = (change: Change): Promise<boolean> => {
    const known = running.get(change.address);
    if (known) return known;
    const promise = (async () => {
      const needed = await Promise.all(
        change.dependsOn.map((address) => (byAddress.has(address) ? run(byAddress.get(address)!) : true)),
      );
      const { address, action } = change;
      const failed = change.dependsOn.find((_, i) => !needed[i]);
      if (failed !== undefined) {
        return settle({ address, action, status: 'skipped', ms: 0, error: `${failed} did not apply` });
      }
      return limit(async () => {
        if (options.signal?.aborted) return settle({ address, action, status: 'skipped', ms: 0, error: 'interrupted' });
        if (halted !== undefined) return settle({ address, action, status: 'skipped', ms: 0, error: halted });
        const started = performance.now();
        try {
          const id = await applyChange(change, desired, options.client, appRef, keys, keeper);
          if (change.action !== 'delete') {
            ids[change.address] = id;
            hashes[change.address] = hashOf(change, desired, appRef);
          }
          return settle({ address, action, status: 'applied', id, ms: elapsed(started) });
        } catch (error) {
          const id = change.id && { id: change.id };
          return settle({
            address,
            action,
            status: 'failed',
            ...id,
            ms: elapsed(started),
            error: describeFailure(error),
          });
        }
      });
    })();
    running.set(change.address, promise);
    return promise;
  };
  await Promise.all(plan.changes.map(run));
  return { outcomes: plan.changes.map((change) => outcomes.get(change.address)!), ids, hashes, keys };
}

/** What applyChange needs to keep the keys of the Applications it creates. */
interface Keeper {
  keys?: KeyKeeper;
  hashOf(change: Change): string;
  /** No further change starts, for this reason. */
  halt(reason: string): void;
}

/** One change's requests; resolves to the resource's id. */
async function applyChange(
  change: Change,
  desired: Desired,
  client: ApiClient,
  appRef: AppRef,
  keys: CreatedKey[],
  keeper: Keeper,
): Promise<string> {
  const { kind, action, id } = change;
  if (action === 'delete') {
    await client[kind].delete(id!);
    return id!;
  }
  if (action === 'adopt') return id!;
  const changed = new Set(change.diffs.map((diff) => diff.field.split('.')[0]!));
  if (kind === 'applications') {
    const app = desired.applications.find((item) => item.name === change.name)!;
    const fields = {
      name: app.name,
      rules: app.rules,
      ...(app.permissions.length > 0 && { permissions: app.permissions }),
    };
    if (action === 'create') return createApplication(change, { ...fields, type: app.type }, client, keys, keeper);
    await client.applications.update(id!, updateApplicationBody({ name: app.name }, fields));
    return id!;
  }
  if (kind === 'reactors') {
    const reactor = desired.reactors.find((item) => item.name === change.name)!;
    const applicationId = appRef(reactor.application);
    if (action === 'create') {
      const { name, configuration } = reactor;
      const body = createReactorBody({ name, code: reactor.code.code, configuration, applicationId });
      return (await client.reactors.create(body)).id;
    }
    // Only what changed is sent (a merge patch): a saved code file is one PATCH of the code.
    await client.reactors.patch(
      id!,
      patchReactorBody({
        ...(action === 'rename' && { name: reactor.name }),
        ...(changed.has('code') && { code: reactor.code.code }),
        ...configurationChanges(change.diffs, reactor.configuration),
        ...(changed.has('application') && { applicationId }),
      }),
    );
    return id!;
  }
  const proxy = desired.proxies.find((item) => item.name === change.name)!;
  const applicationId = appRef(proxy.application);
  if (action === 'create') {
    const created = await client.proxies.create(
      createProxyBody({
        name: proxy.name,
        destinationUrl: proxy.destination_url,
        ...(proxy.request_transform && { requestTransform: proxy.request_transform.code }),
        ...(proxy.response_transform && { responseTransform: proxy.response_transform.code }),
        ...(proxy.configuration && { configuration: proxy.configuration }),
        ...(applicationId !== null && { applicationId }),
        requireAuth: proxy.require_auth,
      }),
    );
    return created.id;
  }
  await client.proxies.patch(
    id!,
    patchProxyBody({
      ...(action === 'rename' && { name: proxy.name }),
      ...(changed.has('destination_url') && { destinationUrl: proxy.destination_url }),
      ...(changed.has('request_transform') && { requestTransform: proxy.request_transform?.code ?? null }),
      ...(changed.has('response_transform') && { responseTransform: proxy.response_transform?.code ?? null }),
      ...configurationChanges(change.diffs, proxy.configuration ?? {}),
      ...(changed.has('application') && { applicationId }),
      ...(changed.has('require_auth') && { requireAuth: proxy.require_auth }),
    }),
  );
  return id!;
}

/**
 * An Application's create: journaled before the request, its key kept before it counts as applied.
 * A journal that cannot be written sends nothing; a key that cannot be saved stops the apply and the
 * failure says how to get a new one (the key is never put in a message).
 */
async function createApplication(
  change: Change,
  fields: Parameters<typeof createApplicationBody>[0],
  client: ApiClient,
  keys: CreatedKey[],
  keeper: Keeper,
): Promise<string> {
  const { name } = change;
  const journal = keeper.keys;
  await journal?.creating(name).catch((error: unknown) => {
    keeper.halt(`not started: the create of ${change.address} could not be journaled`);
    throw new Error(`not sent: svc could not journal the create in .svc/keys.json: ${describeFailure(error)}`);
  });
  let created: Awaited<ReturnType<ApiClient['applications']['create']>>;
  try {
    created = await client.applications.create(createApplicationBody(fields));
  } catch (error) {
    // Refused: nothing was made. Any other failure may have made it: the journal entry stays for the next apply.
    if (error instanceof ApiError && error.status < 500) await journal?.refused(name).catch(() => {});
    throw error;
  }
  if (created.key === undefined) return created.id;
  const key = { name, id: created.id, type: created.type, key: created.key };
  keys.push(key);
  await journal?.created(key, keeper.hashOf(change)).catch((error: unknown) => {
    keeper.halt(`not started: the key of ${change.address} could not be saved`);
    throw new Error(
      `created (${created.id}), but its key could not be saved in .svc/keys.json: ${describeFailure(error)}; ` +
        `\`svc applications regenerate ${created.id}\` issues a new one`,
    );
  });
  return created.id;
}

/** The configuration part of a merge patch: the keys the plan says were added or changed, null for removed ones. */
function configurationChanges(
  diffs: FieldDiff[],
  wanted: Record<string, string>,
): { configuration?: Record<string, string | null> } {
  const keys = diffs.filter((diff) => diff.type === 'secret');
  const set = Object.fromEntries(
    keys
      .filter((diff) => diff.change !== 'removed')
      .map(configKey)
      .map((key) => [key, wanted[key]!]),
  );
  const patch = configurationPatch(set, keys.filter((diff) => diff.change === 'removed').map(configKey));
  return patch ? { configuration: patch } : {};
}

function configKey(diff: FieldDiff): string {
  return diff.field.slice('configuration.'.length);
}

function hashOf(change: Change, desired: Desired, appRef: AppRef): string {
  const named = <T extends { name: string }>(list: T[]): T => list.find((item) => item.name === change.name)!;
  if (change.kind === 'applications')
    return contentHash('applications', wantedApplication(named(desired.applications)));
  if (change.kind === 'reactors') return contentHash('reactors', wantedReactor(named(desired.reactors), appRef));
  return contentHash('proxies', wantedProxy(named(desired.proxies), appRef));
}

/** A failure in one line: an API failure as ApiError words it, an unreachable server, else the message. */
export function describeFailure(error: unknown): string {
  if (error instanceof ApiError) return error.summary;
  if (error instanceof ConnectionError) {
    return `cannot reach ${error.url}: ${error.code === 'ECONNREFUSED' ? 'connection refused' : error.message}`;
  }
  return error instanceof Error ? error.message : String(error);
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started);
}

/** At most `size` tasks at once; a task that ends hands its slot to the next one waiting. */
function semaphore(size: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (active < size) active++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}
