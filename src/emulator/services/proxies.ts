import { transformFileName } from '../../api/code-files.js';
import { randomUUID } from 'node:crypto';
import { proxySchema } from '../../api/schemas.js';
import type { ListQuery, Page, Proxy, ProxyBody } from '../../api/types.js';
import { notFound } from '../errors.js';
import { codeVersion, recordCodeVersion, type Instance, type Runtime, UnloadedWhileLoading } from '../runtime/index.js';
import type { WriteBatch } from '../store/batch.js';
import type { Store } from '../store/store.js';
import type { ApplicationRecord, ProxyRecord } from '../store/records.js';
import { bodyValidator } from '../validation.js';
import type { Caller, CodeOwner } from './applications.js';
import type { TenantClocks } from './tenant-clocks.js';
import { bindableApplication } from './application-binding.js';
import type { Cipher } from '../crypto/cipher.js';
import { openConfiguration, sealConfiguration } from './configuration.js';
import { KeyHashes, hashKey, randomBase58 } from './keys.js';
import { applyMergePatch, requirePatchObject } from './merge-patch.js';
import { filterItems, paginate } from './pagination.js';
import { sandboxGroupOf } from './tenant-sandbox.js';

const checkProxy = bodyValidator<ProxyBody>(proxySchema);

export type TransformKind = 'request' | 'response';
const KINDS: TransformKind[] = ['request', 'response'];

/** The runtime id of a proxy's transform. */
export function transformId(proxyId: string, kind: TransformKind): string {
  return `${proxyId}/${kind}`;
}

/**
 * Pre-configured proxies (CRUD). Each gets a key of its own, unguessable, stored only as a hash
 * (to find the proxy) and sealed (to show it); transforms are loaded in the sandbox when saved,
 * so code that does not load is refused then.
 */
export class ProxyService {
  private readonly owners = new Map<string, CodeOwner>();
  private readonly keyHashes = new KeyHashes();

  constructor(
    private readonly store: Store,
    private readonly runtime: Runtime,
    private readonly cipher: Cipher,
    private readonly clocks: TenantClocks,
  ) {}

  /** A transform's name and tenant for the log, by runtime id. */
  ownerOf(id: string): CodeOwner | undefined {
    return this.owners.get(id);
  }

  async create(caller: Caller, body: ProxyBody): Promise<Proxy> {
    const application = bindableApplication(this.store, caller, body.application);
    const key = `proxy_local_${randomBase58(26)}`;
    const now = this.clocks.now(caller.tenantId).toISOString();
    const id = randomUUID();
    const record: ProxyRecord = {
      id,
      tenant_id: caller.tenantId,
      key_hash: hashKey(key),
      key_sealed: this.cipher.seal(key, keyContext(caller.tenantId, id)),
      ...this.writableFields({ tenant_id: caller.tenantId, id }, body, application),
      created_by: caller.application.id,
      created_at: now,
      modified_by: caller.application.id,
      modified_at: now,
    };
    await this.loadTransforms(record);
    await this.store.proxies.put(record);
    return this.toWire(record);
  }

  list(caller: Caller, query: ListQuery): Page<Proxy> {
    const page = paginate(filterItems(this.store.proxies.list(caller.tenantId), query), query);
    return { ...page, data: page.data.map((record) => this.toWire(record)) };
  }

  get(caller: Caller, id: string): Proxy {
    return this.toWire(this.find(caller, id));
  }

  /** PUT: replaces every field (the key stays); new transforms load first and swap in only if they load. */
  async update(caller: Caller, id: string, body: ProxyBody): Promise<Proxy> {
    const current = this.find(caller, id);
    const application = bindableApplication(this.store, caller, body.application);
    const record: ProxyRecord = {
      ...current,
      ...this.writableFields(current, body, application),
      modified_by: caller.application.id,
      modified_at: this.clocks.now(caller.tenantId).toISOString(),
    };
    await this.loadTransforms(record);
    // Still there once loaded? A delete meanwhile must not be undone by this write.
    await this.store.write((batch) => {
      if (!batch.get(this.store.proxies, record.tenant_id, record.id)) throw notFound('proxy', id);
      batch.put(this.store.proxies, record);
    });
    return this.toWire(record);
  }

  /** PATCH: an RFC 7386 merge patch over the writable fields, checked like a PUT. */
  async patch(caller: Caller, id: string, patch: unknown): Promise<void> {
    requirePatchObject(patch, 'proxy');
    const current = this.find(caller, id);
    const writable: ProxyBody = {
      name: current.name,
      destination_url: current.destination_url,
      request_transform: current.request_transform,
      response_transform: current.response_transform,
      // An Application deleted since is dropped rather than refused: the patch is about other fields.
      application: this.boundApplication(current) ? { id: current.application_id! } : null,
      configuration: this.configurationOf(current),
      require_auth: current.require_auth,
    };
    await this.update(caller, id, checkProxy(applyMergePatch(writable, patch)));
  }

  async delete(caller: Caller, id: string): Promise<void> {
    const record = this.find(caller, id);
    if (!(await this.store.proxies.delete(caller.tenantId, record.id))) throw notFound('proxy', id);
    await Promise.all(KINDS.map((kind) => this.runtime.unload(transformId(record.id, kind), `proxy ${record.name}`)));
    for (const kind of KINDS) this.owners.delete(transformId(record.id, kind));
  }

  /**
   * In `batch`, for a store whose master key was lost (the keys sealed under it cannot be shown any
   * more): gives every proxy a new key. Returns the names of the proxies concerned.
   */
  reissueKeys(batch: WriteBatch): string[] {
    const names: string[] = [];
    for (const saved of this.store.proxies.everything()) {
      const current = batch.get(this.store.proxies, saved.tenant_id, saved.id);
      if (!current) continue;
      const key = `proxy_local_${randomBase58(26)}`;
      batch.put(this.store.proxies, {
        ...current,
        key_hash: hashKey(key),
        key_sealed: this.cipher.seal(key, keyContext(current.tenant_id, current.id)),
      });
      names.push(current.name);
    }
    return names;
  }

  /** The configuration map transforms get (null when none was given). */
  configurationOf(record: ProxyRecord): Record<string, string> | null {
    return openConfiguration(this.cipher, 'proxy', record);
  }

  /** The Application whose permissions the proxy's transforms (and anonymous callers) get. */
  boundApplication(record: ProxyRecord): ApplicationRecord | undefined {
    return record.application_id ? this.store.applications.get(record.tenant_id, record.application_id) : undefined;
  }

  /** The proxy an invocation names by its key (any tenant: the key is what selects it). */
  byKey(key: string): ProxyRecord | undefined {
    return this.store.proxies.findBy('key', this.keyHashes.of(key));
  }

  /** A transform's running instance, loading it if need be (e.g. after a restart). */
  async transform(record: ProxyRecord, kind: TransformKind): Promise<Instance | undefined> {
    const transform = kind === 'request' ? record.request_transform : record.response_transform;
    if (!transform) return undefined;
    const version = recordCodeVersion(record, transform.code, transformFile(record, kind));
    return (
      this.runtime.current(transformId(record.id, kind), version) ?? this.loadTransform(record, kind, transform.code)
    );
  }

  private async loadTransforms(record: ProxyRecord): Promise<void> {
    for (const kind of KINDS) {
      const transform = kind === 'request' ? record.request_transform : record.response_transform;
      if (transform) await this.loadTransform(record, kind, transform.code);
      else {
        await this.runtime.unload(transformId(record.id, kind));
        this.owners.delete(transformId(record.id, kind));
      }
    }
  }

  private async loadTransform(record: ProxyRecord, kind: TransformKind, code: string): Promise<Instance> {
    const id = transformId(record.id, kind);
    const filename = transformFile(record, kind);
    const instance = await this.runtime
      .load({
        id,
        version: codeVersion(code, filename),
        code,
        filename,
        tenant: sandboxGroupOf(this.store, record.tenant_id),
        group: record.id,
        label: `the ${kind} transform of proxy ${record.name}`,
        source: { kind: 'transform', name: record.name, which: kind },
      })
      .catch((error: unknown) => {
        // Deleted while its code loaded (for a PUT, a PATCH or a first call): gone, as after the delete.
        throw error instanceof UnloadedWhileLoading ? notFound('proxy', record.id) : error;
      });
    this.owners.set(id, { name: `${record.name} (${kind} transform)`, tenantId: record.tenant_id });
    return instance;
  }

  private find(caller: Caller, id: string): ProxyRecord {
    const record = this.store.proxies.get(caller.tenantId, id.toLowerCase());
    if (!record) throw notFound('proxy', id);
    return record;
  }

  private toWire(record: ProxyRecord): Proxy {
    const {
      key_hash: _hash,
      key_sealed,
      configuration_sealed: _sealed,
      id,
      tenant_id,
      name,
      destination_url,
      request_transform,
      response_transform,
      application_id: _bound,
      require_auth,
      ...rest
    } = record;
    // Fields in the order the API has always listed them (a record sealed from plaintext lists them otherwise).
    return {
      id,
      tenant_id,
      name,
      destination_url,
      request_transform,
      response_transform,
      application_id: this.boundApplication(record)?.id ?? null,
      configuration: this.configurationOf(record),
      require_auth,
      ...rest,
      key: this.cipher.open<string>(key_sealed, keyContext(record.tenant_id, record.id)),
    };
  }

  /** The fields a create or a PUT sets, with their defaults (PUT replaces: omitted means default). */
  private writableFields(
    owner: { tenant_id: string; id: string },
    body: ProxyBody,
    application: ApplicationRecord | undefined,
  ) {
    return {
      name: body.name,
      destination_url: body.destination_url,
      request_transform: body.request_transform ?? null,
      response_transform: body.response_transform ?? null,
      application_id: application?.id ?? null,
      configuration_sealed: sealConfiguration(this.cipher, 'proxy', owner, body.configuration ?? null),
      require_auth: body.require_auth ?? true,
    };
  }
}

function transformFile(record: ProxyRecord, kind: TransformKind): string {
  return transformFileName(record.name, kind);
}

/** What a proxy's sealed key is bound to (its tenant and id). */
export function keyContext(tenantId: string, id: string): string {
  return `proxy-key:${tenantId}:${id}`;
}
