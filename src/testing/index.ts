/**
 * svc/testing: every test gets its own platform. `startSvc` starts the emulator in the test process
 * (in memory, on a free port) and applies svc.yaml once, into a template tenant; `svc.tenant()`
 * forks that template in one store write (a few forks are kept ready, made between tests), so that
 * each test has its own Applications (keys of its own), reactors, proxies, tokens and events, its
 * code running in the template's warm sandbox processes with module state of its own. No runner is
 * imported: vitest, jest and node:test alike.
 *
 *   const svc = await startSvc({ config: 'svc.yaml' });
 *   const t = await svc.tenant();
 *   const { status, body, logs } = await t.reactors.invoke('charge', { amount: 42 });
 *   await t.dispose();
 *   await svc.stop();
 */
import path from 'node:path';
import type { Tier } from '../api/tiers.js';
import { ApiClient } from '../client/index.js';
import { createEmulator, type Emulator, type ForkedTenant } from '../emulator/index.js';
import { DestinationMocks } from '../emulator/outbound/mocks.js';
import { applyToTemplate, loadSvcConfig, type SvcConfig } from './config.js';
import { keepAliveAgent } from './http.js';
import { ConsoleLines } from './logs.js';
import { SpareForks } from './spares.js';
import { SvcTenant, type TenantContext } from './tenant.js';
import { WebhookReceiver } from './webhooks.js';
import { type LeakGuardMode, type LeakGuardSetting, leakGuardOptions } from './leak-options.js';

export type { SvcConfig } from './config.js';
export type { CallResult, InvokeOptions, ProxyCall, SvcTenant, TenantKeys } from './tenant.js';
export type { ReceivedWebhook, WebhookReply } from './webhooks.js';
export type { LeakGuardMode, LeakGuardSetting } from './leak-options.js';
export type { TenantClock } from './clock.js';
export type {
  DestinationCall,
  DestinationRecording,
  DestinationRequest,
  DestinationSender,
  MockAnswer,
  MockHandler,
  MockInterceptor,
  MockMatch,
  MockScope,
  OriginMocks,
  PathMatcher,
  PendingMock,
  TenantDestinations,
} from './destinations.js';

export interface StartOptions {
  /** svc.yaml: a path (relative to the current directory), or the same document as an object. */
  config: SvcConfig;
  /** The platform tier the emulator plays; default enterprise (asynchronous invocations need it). */
  tier?: Tier;
  /**
   * Where the files svc.yaml names are read from, and allowlisted npm packages resolved; default the
   * folder of `config` when it is a path, else the current directory.
   */
  projectDir?: string;
  /**
   * The leak guard: `fail` by default here (a call that spills its plaintext answers a leak problem,
   * so a test sees it); `warn` or `off` as svc serve takes them; or `{ mode, allowCards, allowHosts }`
   * (declared test cards; hosts a call's code may send its plaintext to, a payment provider's).
   * `leakGuardAllow`: declared test cards.
   */
  leakGuard?: LeakGuardMode | LeakGuardSetting;
  leakGuardAllow?: string[];
}

/** A running emulator with svc.yaml applied to its template: `tenant()` for each test, `stop()` after all. */
export interface Svc {
  /** `http://127.0.0.1:<port>`: the emulator's URL, for any HTTP client. */
  readonly url: string;
  /** The emulator itself (its events, its tenants), for what this module does not cover. */
  readonly emulator: Emulator;
  /** The tenant svc.yaml was applied to, which every `tenant()` is a fork of. */
  readonly templateId: string;
  /** A fresh tenant forked from the template. */
  tenant(options?: { name?: string }): Promise<SvcTenant>;
  /** Stops the emulator and frees every tenant not disposed; safe to call more than once. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts the emulator in this process and applies svc.yaml once, into a template tenant. */
export async function startSvc(options: StartOptions): Promise<Svc> {
  if (options === null || typeof options !== 'object' || options.config === undefined) {
    throw new TypeError('startSvc needs { config }: a path to svc.yaml, or the same document as an object.');
  }
  const projectDir = path.resolve(
    options.projectDir ?? (typeof options.config === 'string' ? path.dirname(path.resolve(options.config)) : '.'),
  );
  const config = typeof options.config === 'string' ? path.resolve(options.config) : options.config;
  // Loaded first: a svc.yaml that does not load fails before anything starts.
  const desired = await loadSvcConfig(config, projectDir);
  const emulator = createEmulator({
    inMemory: true,
    port: 0,
    host: '127.0.0.1',
    ...(options.tier !== undefined && { tier: options.tier }),
    ...leakGuardOptions(options),
    runtime: { projectDir },
  });
  const logs = new ConsoleLines(emulator.events);
  // Destination mocks per tenant, in the emulator's one door out: a tenant's requests find its own.
  const mocks = new DestinationMocks();
  emulator.outbound.use(mocks.interceptor);
  const receiver = new WebhookReceiver();
  const agent = keepAliveAgent();
  const stopEverything = async () => {
    agent.destroy();
    logs.close();
    await receiver.stop();
    await emulator.dispose();
  };
  let templateId: string;
  let url: string;
  try {
    ({ url } = await emulator.ready);
    const template = await emulator.tenants.create({ name: 'svc/testing template' });
    templateId = template.id;
    const client = new ApiClient({
      baseUrl: url,
      managementKey: template.management_key,
      apiKey: template.private_key,
    });
    await applyToTemplate(desired, client);
  } catch (error) {
    await stopEverything();
    throw error;
  }
  const spares = new SpareForks(emulator.tenants, templateId);
  spares.fill();
  let stopping: Promise<void> | undefined;
  const context: TenantContext = {
    url,
    tenants: emulator.tenants,
    agent,
    logs,
    receiver,
    mocks,
    outbound: emulator.outbound,
    stopped: () => stopping !== undefined,
  };
  const stop = () => {
    stopping ??= (async () => {
      spares.stop();
      await stopEverything();
    })();
    return stopping;
  };
  // A fork made (or failing) as the svc stopped belongs to an emulator that is gone: it is freed with it.
  const stoppedMeanwhile = () =>
    new Error('svc/testing: this svc was stopped while the tenant was being made; start another with startSvc().');
  return {
    url,
    emulator,
    templateId,
    async tenant(tenantOptions = {}) {
      if (stopping) throw new Error('svc/testing: this svc is stopped; start another with startSvc().');
      let forked: ForkedTenant;
      try {
        forked =
          tenantOptions.name === undefined
            ? await spares.take()
            : await emulator.tenants.fork(templateId, { name: tenantOptions.name });
      } catch (error) {
        throw stopping ? stoppedMeanwhile() : error;
      }
      if (stopping) throw stoppedMeanwhile();
      return new SvcTenant(context, forked);
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
