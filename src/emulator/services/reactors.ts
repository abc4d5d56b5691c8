import { reactorFileName } from '../../api/code-files.js';
import { randomUUID } from 'node:crypto';
import { reactorSchema } from '../../api/schemas.js';
import type { Tier } from '../../api/tiers.js';
import type { InvokeReactorBody, ListQuery, Page, Reactor, ReactorBody, ReactorResult } from '../../api/types.js';
import type { Cipher } from '../crypto/cipher.js';
import { notFound } from '../errors.js';
import type { EmitEvent } from '../events.js';
import { recordCodeVersion, type Instance, type Runtime, UnloadedWhileLoading } from '../runtime/index.js';
import type { ApplicationRecord, ReactorRecord } from '../store/records.js';
import type { Store } from '../store/store.js';
import { bodyValidator } from '../validation.js';
import { holdsAnywhere } from './access.js';
import { bindableApplication } from './application-binding.js';
import { toWire as applicationToWire, type Caller, type CodeOwner } from './applications.js';
import { openConfiguration, sealConfiguration } from './configuration.js';
import { applyMergePatch, requirePatchObject } from './merge-patch.js';
import { filterItems, paginate } from './pagination.js';
import { PermissionDenied } from './permission-denied.js';
import { ReactorInvocations } from './reactor-invocation.js';
import { sandboxGroupOf } from './tenant-sandbox.js';
import type { ReactorResults } from './reactor-results.js';
import type { TenantClocks } from './tenant-clocks.js';
import type { TokenContext, TokenService } from './tokens.js';

const checkReactor = bodyValidator<ReactorBody>(reactorSchema);

export interface ReactorServiceOptions {
  store: Store;
  cipher: Cipher;
  runtime: Runtime;
  tokens: TokenService;
  /** Asynchronous invocations: their results and webhook deliveries. */
  results: ReactorResults;
  tier: Tier;
  emit: EmitEvent;
  clocks: TenantClocks;
  /** The synchronous invocation timeout (30 s on the platform). */
  syncTimeoutMs?: number;
}

/**
 * Reactors: stored code run on demand in the sandbox (running it: reactor-invocation.ts). Code is
 * loaded when it is saved, so a reactor that does not load is refused then (422, with
 * file:line:column), not at first invoke; saving new code hot-swaps the running version.
 */
export class ReactorService {
  private readonly owners = new Map<string, CodeOwner>();
  private readonly configurations = new WeakMap<ReactorRecord, Record<string, string>>();

  /** Running reactors (`svc replay` re-runs through it and watches its calls). */
  readonly invocations: ReactorInvocations;

  constructor(private readonly options: ReactorServiceOptions) {
    this.invocations = new ReactorInvocations({
      tokens: options.tokens,
      results: options.results,
      tier: options.tier,
      emit: options.emit,
      syncTimeoutMs: options.syncTimeoutMs,
      instanceOf: (reactor) => this.instanceOf(reactor),
      boundApplication: (reactor) => this.boundApplication(reactor),
      configurationOf: (reactor) => this.configurationOf(reactor),
    });
  }

  /** A reactor's name and tenant for the log, by id (the runtime knows code by id only). */
  ownerOf(id: string): CodeOwner | undefined {
    return this.owners.get(id);
  }

  async create(caller: Caller, body: ReactorBody): Promise<Reactor> {
    const application = bindableApplication(this.options.store, caller, body.application);
    const now = this.options.clocks.now(caller.tenantId).toISOString();
    const id = randomUUID();
    const record: ReactorRecord = {
      id,
      tenant_id: caller.tenantId,
      name: body.name,
      code: body.code,
      configuration_sealed: sealConfiguration(
        this.options.cipher,
        'reactor',
        { tenant_id: caller.tenantId, id },
        body.configuration,
      ),
      application_id: application?.id ?? null,
      created_by: caller.application.id,
      created_at: now,
      modified_by: caller.application.id,
      modified_at: now,
    };
    await this.load(record);
    await this.options.store.reactors.put(record);
    return this.toWire(record);
  }

  list(caller: Caller, query: ListQuery): Page<Reactor> {
    const page = paginate(filterItems(this.options.store.reactors.list(caller.tenantId), query), query);
    return { ...page, data: page.data.map((record) => this.toWire(record)) };
  }

  get(caller: Caller, id: string): Reactor {
    return this.toWire(this.find(caller, id));
  }

  /** PUT: replaces every field; new code is loaded first and swapped in only if it loads. */
  async update(caller: Caller, id: string, body: ReactorBody): Promise<Reactor> {
    const current = this.find(caller, id);
    const application = bindableApplication(this.options.store, caller, body.application);
    const record: ReactorRecord = {
      ...current,
      name: body.name,
      code: body.code,
      configuration_sealed: sealConfiguration(this.options.cipher, 'reactor', current, body.configuration),
      application_id: application?.id ?? null,
      modified_by: caller.application.id,
      modified_at: this.options.clocks.now(caller.tenantId).toISOString(),
    };
    await this.load(record);
    // Still there once loaded? A delete meanwhile must not be undone by this write.
    await this.options.store.write((batch) => {
      if (!batch.get(this.options.store.reactors, record.tenant_id, record.id)) throw notFound('reactor', id);
      batch.put(this.options.store.reactors, record);
    });
    return this.toWire(record);
  }

  /** PATCH: an RFC 7386 merge patch over the reactor's writable fields, checked like a PUT. */
  async patch(caller: Caller, id: string, patch: unknown): Promise<void> {
    requirePatchObject(patch, 'reactor');
    const current = this.find(caller, id);
    const writable: ReactorBody = {
      name: current.name,
      code: current.code,
      configuration: this.configurationOf(current),
      // An Application deleted since is dropped rather than refused: the patch is about other fields.
      ...(this.boundApplication(current) && { application: { id: current.application_id! } }),
    };
    await this.update(caller, id, checkReactor(applyMergePatch(writable, patch)));
  }

  async delete(caller: Caller, id: string): Promise<void> {
    const record = this.find(caller, id);
    if (!(await this.options.store.reactors.delete(caller.tenantId, record.id))) throw notFound('reactor', id);
    this.owners.delete(record.id);
    await this.options.runtime.unload(record.id, `reactor ${record.name}`);
  }

  /**
   * Invokes a reactor (see ReactorInvocations): the caller needs token:use on some container, as
   * detokenizing its args and tokenizing the answer check per container. Checked once, as the
   * call's context is made (call-context.ts), and handed down with it.
   */
  async invoke(
    ctx: TokenContext,
    id: string,
    body: InvokeReactorBody,
    requestId: string,
  ): Promise<{ status: 200 | 202; body: unknown }> {
    const call = this.options.tokens.callContext(ctx, 'invoking a reactor');
    // Awaited here: returning the promise from an async function would take two more turns of the
    // microtask queue before the answer is written.
    return await this.invocations.invoke(call, this.find(ctx.caller, id), body, requestId);
  }

  /** An asynchronous invocation's outcome, for polling. */
  result(caller: Caller, reactorId: string, requestId: string): ReactorResult {
    if (!holdsAnywhere(caller.application, 'token:use')) {
      throw new PermissionDenied({ permission: 'token:use' }, caller.application);
    }
    return this.invocations.result(caller, this.find(caller, reactorId), reactorId, requestId);
  }

  /** Waits for the asynchronous runs under way, and the deliveries (which end at once once stopping). */
  async settle(): Promise<void> {
    await this.options.results.settle();
  }

  /** The running instance of a reactor's current code, loading it if need be (e.g. after a restart). */
  private instanceOf(reactor: ReactorRecord): Instance | Promise<Instance> {
    return this.options.runtime.current(reactor.id, versionOf(reactor)) ?? this.load(reactor);
  }

  private async load(reactor: ReactorRecord): Promise<Instance> {
    const instance = await this.options.runtime
      .load({
        id: reactor.id,
        version: versionOf(reactor),
        code: reactor.code,
        filename: fileNameOf(reactor.name),
        // A fork's code runs in its template's processes (a Compartment of its own all the same).
        tenant: sandboxGroupOf(this.options.store, reactor.tenant_id),
        label: `reactor ${reactor.name}`,
        source: { kind: 'reactor', name: reactor.name },
      })
      .catch((error: unknown) => {
        // Deleted while its code loaded (for a PUT, a PATCH or a first call): gone, as after the delete.
        throw error instanceof UnloadedWhileLoading ? notFound('reactor', reactor.id) : error;
      });
    // Named only once loaded: a refused update must not relabel the version still serving.
    this.owners.set(reactor.id, { name: reactor.name, tenantId: reactor.tenant_id });
    return instance;
  }

  private find(caller: Caller, id: string): ReactorRecord {
    const record = this.options.store.reactors.get(caller.tenantId, id.toLowerCase());
    if (!record) throw notFound('reactor', id);
    return record;
  }

  private boundApplication(reactor: ReactorRecord): ApplicationRecord | undefined {
    return reactor.application_id
      ? this.options.store.applications.get(reactor.tenant_id, reactor.application_id)
      : undefined;
  }

  /**
   * The configuration, opened once per record (records are replaced on every change): opening is
   * a decryption, and every invocation hands the configuration to the code. Frozen: it is shared.
   */
  private configurationOf(record: ReactorRecord): Record<string, string> {
    let configuration = this.configurations.get(record);
    if (!configuration)
      this.configurations.set(
        record,
        (configuration = Object.freeze(
          openConfiguration<Record<string, string>>(this.options.cipher, 'reactor', record),
        )),
      );
    return configuration;
  }

  private toWire(record: ReactorRecord): Reactor {
    const { id, tenant_id, name, code, configuration_sealed: _sealed, application_id, ...rest } = record;
    const application = application_id
      ? this.options.store.applications.get(record.tenant_id, application_id)
      : undefined;
    return {
      id,
      tenant_id,
      name,
      code,
      configuration: this.configurationOf(record),
      ...rest,
      application: application ? applicationToWire(application) : null,
    };
  }
}

function versionOf(reactor: ReactorRecord): string {
  return recordCodeVersion(reactor, reactor.code, fileNameOf(reactor.name));
}

/** The file name stack traces and load errors show for a reactor (api/code-files.ts). */
export const fileNameOf = reactorFileName;
