/**
 * The start of an emulator, step by step: the store and its master key, the sandbox runtime, the
 * services, the HTTP server, the bootstrap tenant and the credentials file. Each step pushes its
 * close on the teardown stack as it opens, so that a dispose (or a start failing half-way) closes
 * them in reverse. createEmulator (index.ts) runs it and hands out what it brought up.
 */
import { unlink } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_HOST, DEFAULT_PORT, MASTER_KEY_FILE } from '../api/defaults.js';
import { quotaLimits } from '../api/quotas.js';
import type { Tier } from '../api/tiers.js';
import type { Teardown } from '../lib/teardown.js';
import { Cipher } from './crypto/cipher.js';
import { EmulatorError } from './errors.js';
import { TenantEventLog } from './event-log.js';
import type { EmitEvent, EventHub } from './events.js';
import { DEFAULT_TIMEOUTS } from './http/connections.js';
import { createHttpServer, type HttpServer } from './http/front.js';
import { listen } from './http/listen.js';
import { checkOptions, type EmulatorOptions } from './options.js';
import { Quotas } from './quotas.js';
import type { OutboundGateway } from './outbound/index.js';
import type { LeakGuard } from './leaks/guard.js';
import type { CallReplays } from './replay/index.js';
import { ObservedPipeline } from './replay/observed-pipeline.js';
import { attachRecording } from './recording/index.js';
import { Runtime, freeInspectPort, inspectNotice } from './runtime/index.js';
import type { CodeOwner } from './services/applications.js';
import { createServices, type Services } from './services/index.js';
import { holdsTokens, sealAtStart } from './services/lost-key.js';
import { DEFAULT_RESULT_RETENTION_MS } from './services/reactor-results.js';
import type { BootstrapResult } from './services/tenants.js';
import { DEFAULT_TRANSACTION_TTL_MS } from './services/transactions.js';
import { credentialsPath, readCredentials, writeCredentials } from './store/credentials.js';
import { loadMasterKey } from './store/master-key.js';
import { Store } from './store/store.js';

/** How often expired Applications, tokens and transactions are swept out of the store. */
const SWEEP_INTERVAL_MS = 30_000;

/** What a start brought up: `ready` resolves to it. */
export interface EmulatorReady {
  /** `http://host:port`. */
  url: string;
  /** What the start found or created: the tenant, and the keys it generated (to be shown once). */
  bootstrap: BootstrapResult;
  /** Where the CLI finds the URL and keys (0600); undefined in memory. */
  credentialsFile: string | undefined;
  tier: Tier;
  /** The bootstrap tenant's webhook signing secret (SVC-SIGNATURE). */
  webhookSecret: string;
  /** With `inspect`: the port on 127.0.0.1 a debugger attaches to. */
  inspectPort?: number;
}

/** What a start is given by createEmulator, and how it tells what it made. */
export interface StartContext {
  options: EmulatorOptions;
  tier: Tier;
  events: EventHub;
  emit: EmitEvent;
  teardown: Teardown;
  gateway: OutboundGateway;
  /** svc replay's kept calls (made with the gateway, whose first interceptor is theirs). */
  replays: CallReplays;
  /** The leak guard (emulator/leaks): the calls that detokenize, and the checks of where their output goes. */
  leaks: LeakGuard;
  /** Whether dispose was called meanwhile. */
  disposed(): boolean;
  /** When dispose began (0 before): the grace of asynchronous runs counts from it. */
  stoppingSince(): number;
  /** The services, once made (for `emulator.tenants`). */
  madeServices(services: Services): void;
  /** The URL, once listening. */
  listening(url: string): void;
}

export async function start(ctx: StartContext): Promise<EmulatorReady> {
  const { options, emit, teardown } = ctx;
  checkOptions(options);
  // Cassettes read (or the folder checked) before anything opens; written last on dispose.
  await attachRecording(ctx);
  const quotas = new Quotas(quotaLimits(options.quotas));
  const { store, cipher, created, forgetNewKey } = await openStore(options, emit, teardown, quotas);
  // A debugger needs a port that stays the same across the sandbox's restarts: 0 is chosen once here.
  const inspect = options.inspect && { ...options.inspect, port: options.inspect.port || (await freeInspectPort()) };
  const runtime = openRuntime(ctx, inspect);
  if (inspect) emit({ type: 'warning', message: inspectNotice(inspect.port) });
  const services = createServices(store, {
    cipher,
    runtime: runtime.runtime,
    emit,
    leaks: ctx.leaks,
    tier: ctx.tier,
    transactionTtlMs: options.transactionTtlMs ?? DEFAULT_TRANSACTION_TTL_MS,
    ...(options.syncTimeoutMs !== undefined && { syncTimeoutMs: options.syncTimeoutMs }),
    ...(options.webhooks && { webhooks: options.webhooks }),
    ...(options.results && { results: options.results }),
    ...(options.clock && { clock: options.clock }),
  });
  ctx.madeServices(services);
  ctx.events.clockOffset = (tenantId) => services.clocks.offset(tenantId);
  runtime.ownedBy((id) => services.reactors.ownerOf(id) ?? services.proxies.ownerOf(id));
  teardown.push(async () => {
    // Asynchronous invocations under way get what is left of the grace to store their results
    // (webhooks stop retrying: a delivery left pending resumes on the next start); then the
    // sandbox stops, and the runs it cut off store how they ended before the store closes.
    await services.dispose();
    await within(services.reactors.settle(), ctx.stoppingSince() + graceMs(options) - Date.now());
    await runtime.runtime.dispose();
    await services.reactors.settle();
  });
  await prepareStore(store, services, cipher, created, forgetNewKey, emit);
  const serving = { now: false };
  const { server, eventLog } = openServer(ctx, store, services, () => serving.now);
  const sweep = startSweeper(services, options, teardown);
  if (ctx.disposed()) throw new EmulatorError('The emulator was disposed while it started.');
  // Listening comes before the bootstrap: a port in use fails the start before a tenant (whose
  // keys would be shown nowhere) is written. Requests meanwhile are answered 503.
  const url = await listen(server, options.port ?? DEFAULT_PORT, options.host ?? DEFAULT_HOST);
  ctx.listening(url);
  // Requests in flight finish first: the runtime and the proxy pool they use stay up meanwhile.
  teardown.push(() => server.closeGracefully());
  // Open event streams end first: the graceful stop waits for every answer under way.
  teardown.push(() => eventLog.close());
  await sweep();
  const bootstrap = await services.tenants.bootstrap({
    ...(options.managementKey !== undefined && { managementKey: options.managementKey }),
    ...(options.privateKey !== undefined && { privateKey: options.privateKey }),
  });
  const webhookSecret = await services.webhooks.secret(bootstrap.tenantId);
  // Served before the credentials file is written: whoever reads it (the CLI beside it) may call at once.
  serving.now = true;
  const credentialsFile = await saveCredentials(store, services, bootstrap, url, emit);
  // Booted once serving: its start would compete with the emulator's for the cores.
  if (options.runtime?.prewarm) runtime.runtime.prewarm();
  return {
    url,
    bootstrap,
    credentialsFile,
    tier: ctx.tier,
    webhookSecret,
    ...(inspect && { inspectPort: inspect.port }),
  };
}

/** The store, and the master key that seals what it holds (made on a first start). */
async function openStore(options: EmulatorOptions, emit: EmitEvent, teardown: Teardown, quotas: Quotas) {
  const store = await Store.open({
    ...(options.data !== undefined && { path: options.data }),
    inMemory: options.inMemory ?? false,
    ...(options.fileSystem && { fileSystem: options.fileSystem }),
    report: (message) => emit({ type: 'error', message }),
    quotas,
  });
  teardown.push(() => store.close());
  for (const problem of store.problems) emit({ type: 'warning', message: problem });
  const { key, created, notice } = await loadMasterKey(store.dir, options.masterKey);
  if (notice !== undefined) emit({ type: 'warning', message: notice });
  // The key just made cannot read what a lost one sealed: it is removed if the start fails before
  // all that is made anew (see sealAtStart), so that the next start asks again.
  const forgetNewKey = async () => {
    if (created && store.dir !== undefined) await unlink(path.join(store.dir, MASTER_KEY_FILE)).catch(() => {});
  };
  if (created && holdsTokens(store)) {
    await forgetNewKey();
    throw new EmulatorError(
      (name) =>
        `The store holds tokens but its master key (${path.join(store.dir ?? '', MASTER_KEY_FILE)}) is missing: the tokens cannot be read without it. ` +
        `Restore master.key from a backup, or pass it as ${name('masterKey')}; to start over without the tokens, move the data folder aside.`,
      { option: 'masterKey' },
    );
  }
  return { store, cipher: new Cipher(key), created, forgetNewKey };
}

/**
 * The sandbox runtime. Its console lines and outbound requests are named by the code's owner,
 * known once the services are made (`ownedBy`).
 */
function openRuntime({ options, emit, teardown, gateway, leaks }: StartContext, inspect: EmulatorOptions['inspect']) {
  let ownerOf = (_id: string): CodeOwner | undefined => undefined;
  // Closed after the runtime.
  teardown.push(() => gateway.close());
  const runtime = new Runtime(
    {
      ...options.runtime,
      ...(inspect && { inspect }),
      onLog: (entry) => {
        const owner = ownerOf(entry.instance);
        // The sandbox knows a call by its watch id; the line names the call's request id. Redacted
        // of the call's plaintext and of what its code version was revealed (a timer's: no call).
        leaks.fromCode(entry.instance, entry.requestId, () =>
          emit({
            type: 'console',
            source: owner?.name ?? entry.instance,
            tenantId: owner?.tenantId,
            level: entry.level,
            text: entry.text,
            requestId: leaks.callOf(entry.requestId)?.traceId ?? entry.requestId,
          }),
        );
      },
    },
    {
      // The runtime names the code's sandbox group, which a fork shares with its template: the
      // request is named by the tenant that owns the code (svc/testing's mocks are per tenant).
      outbound: (request, origin) => {
        const owner = ownerOf(origin.id);
        // The call's plaintext goes with it (and its code version's: a timer's request has no call):
        // interceptors (the guard, a recorder) redact by provenance. The sandbox names the call by
        // its watch id; the request goes out under the call's trace id.
        const watchId = origin.traceId;
        const call = leaks.callOf(watchId);
        const secrets = leaks.secretsOf(origin.id, watchId);
        return gateway.send(request, {
          ...origin,
          ...(owner && { tenantId: owner.tenantId }),
          traceId: call?.traceId ?? watchId,
          watchId,
          secrets,
          configuration: call?.configuration,
        });
      },
      // What a version was revealed is looked for until its process can no longer hold it (unless
      // the same version was loaded anew meanwhile).
      retired: (id, version) => {
        if (runtime.get(id)?.version !== version) leaks.forget(id, version);
      },
    },
  );
  teardown.push(() => runtime.dispose());
  return {
    runtime,
    ownedBy(find: (id: string) => CodeOwner | undefined) {
      ownerOf = find;
    },
  };
}

/** Before anything is served: plaintext configuration sealed, what a lost key sealed made anew, runs cut off ended. */
async function prepareStore(
  store: Store,
  services: Services,
  cipher: Cipher,
  created: boolean,
  forgetNewKey: () => Promise<void>,
  emit: EmitEvent,
): Promise<void> {
  let resealed: string[];
  try {
    resealed = await sealAtStart(store, services, cipher, created);
  } catch (error) {
    // Nothing of it was saved: without the key just made, the next start makes it all anew again.
    await forgetNewKey();
    throw error;
  }
  for (const message of resealed) emit({ type: 'warning', message });
  for (const message of await services.tenants.recoverMissing()) emit({ type: 'warning', message });
  // Runs cut off by the last stop end failed; deliveries pending then resume.
  await services.results.recover();
}

function openServer(
  { options, tier, emit, events, gateway, replays }: StartContext,
  store: Store,
  services: Services,
  serving: () => boolean,
): { server: HttpServer; eventLog: TenantEventLog } {
  const pipeline = new ObservedPipeline(
    { proxies: services.proxies, applications: services.applications, tokens: services.tokens, tier, emit, gateway },
    replays,
  );
  replays.attach({ store, tokens: services.tokens, pipeline, reactors: services.reactors.invocations });
  const eventLog = new TenantEventLog(events);
  const server = createHttpServer({
    services,
    pipeline,
    replays,
    emit,
    eventLog,
    serving,
    debug: options.debug ?? false,
    timeouts: {
      ...(options.requestTimeoutMs !== undefined && { requestTimeoutMs: options.requestTimeoutMs }),
      ...(options.headersTimeoutMs !== undefined && { headersTimeoutMs: options.headersTimeoutMs }),
      ...(options.shutdownGraceMs !== undefined && { shutdownGraceMs: options.shutdownGraceMs }),
    },
  });
  return { server, eventLog };
}

/** Sweeps expired records every so often; a retention shorter than the interval (tests use one) as often as it asks. */
function startSweeper(services: Services, options: EmulatorOptions, teardown: Teardown): () => Promise<void> {
  const sweep = services.sweepExpired;
  const sweeper = setInterval(
    () => void sweep(),
    Math.max(100, Math.min(SWEEP_INTERVAL_MS, options.results?.retentionMs ?? DEFAULT_RESULT_RETENTION_MS)),
  );
  sweeper.unref();
  teardown.push(() => clearInterval(sweeper));
  return sweep;
}

/** Writes the URL and the bootstrap keys to the credentials file beside the store (none in memory). */
async function saveCredentials(
  store: Store,
  services: Services,
  bootstrap: BootstrapResult,
  url: string,
  emit: EmitEvent,
): Promise<string | undefined> {
  if (store.dir === undefined) return undefined;
  const credentialsFile = credentialsPath(store.dir);
  const saved = await readCredentials(credentialsFile);
  const known = [bootstrap.keys.managementKey, bootstrap.keys.privateKey, saved.management_key, saved.private_key];
  for (const { kind, id } of services.tenants.lostKeys(bootstrap.tenantId, known))
    emit({ type: 'warning', message: lostKeyWarning(kind, id, credentialsFile) });
  await writeCredentials(credentialsFile, {
    url,
    tenant_id: bootstrap.tenantId,
    management_key: bootstrap.keys.managementKey,
    private_key: bootstrap.keys.privateKey,
  });
  return credentialsFile;
}

/** What a start says of a starter Application whose key nobody has, and how to get a working one. */
function lostKeyWarning(kind: 'management' | 'private', id: string, credentialsFile: string): string {
  return (
    `The key of the bootstrap ${kind} Application (${id}) is in neither ${credentialsFile} nor the options given ` +
    '(an earlier start failed before saving it, or it was regenerated since): it cannot be shown again. To use that ' +
    `Application, start with options.${kind}Key set to a key of your choice (16 to 256 letters, digits, "_", "-" or "."): ` +
    'it replaces the lost one.'
  );
}

/** How long requests in flight, then asynchronous runs, get to finish once dispose begins. */
function graceMs(options: EmulatorOptions): number {
  return options.shutdownGraceMs ?? DEFAULT_TIMEOUTS.shutdownGraceMs;
}

/** Waits for `task`, or `ms` at most. */
async function within(task: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([task, new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, ms))))]);
  clearTimeout(timer);
}
