import { type StateDocument, type StateKind, type StatePlan, sortState } from '../../api/state.js';
import { packageVersion } from '../../lib/package-version.js';
import type { Cipher } from '../crypto/cipher.js';
import { HttpError } from '../errors.js';
import type { Runtime } from '../runtime/index.js';
import type { WriteBatch } from '../store/batch.js';
import type { Collection, TenantRecord } from '../store/collection.js';
import type { Store } from '../store/store.js';
import type { Caller } from './applications.js';
import { transformId } from './proxies.js';
import { checkGrants } from './grants.js';
import { hashKey } from './keys.js';
import { checkEntries } from './state-checks.js';
import { tenantEntries } from './state-entries.js';
import { requireTenantRow } from './tenant-fork.js';
import { ImportPlan, collectionOf } from './state-import.js';
import type { TenantClocks } from './tenant-clocks.js';

export interface ImportOptions {
  dryRun: boolean;
  /** The tenant ends equal to the file (but the key making the call, and the tenant's bootstrap Applications). */
  replace: boolean;
}

/**
 * A tenant's state exported, imported and reset (`svc state`, `/_emulator/state`). An import is one
 * store write: all of it, or (a bad file, a key another tenant holds) nothing. Entries are matched
 * by id, so that what refers to them (a bound Application, a token id kept in a database) still
 * holds. The Application whose key makes the call and the tenant's bootstrap Applications are never
 * deleted: the import or reset would lock its own caller out.
 */
export class StateService {
  constructor(private readonly deps: { store: Store; cipher: Cipher; runtime: Runtime; clocks: TenantClocks }) {}

  exportState(tenantId: string): StateDocument {
    return sortState({
      svc_state: 1,
      svc_version: packageVersion(),
      exported_at: this.deps.clocks.now(tenantId).toISOString(),
      ...tenantEntries(this.deps.store, this.deps.cipher, tenantId),
    });
  }

  async importState(caller: Caller, doc: StateDocument, options: ImportOptions): Promise<StatePlan> {
    const { store, cipher } = this.deps;
    const tenantId = caller.tenantId;
    checkApplicationGrants(doc);
    doc = this.adoptSameKeys(tenantId, doc);
    const protectedIds = this.protectedApplications(caller);
    const keptOnReplace = options.replace ? [...protectedIds.keys()] : undefined;
    await checkEntries(doc, badFile);
    this.check(tenantId, doc, keptOnReplace);
    this.checkNoLockout(tenantId, doc, protectedIds);
    const now = this.deps.clocks.now(tenantId).toISOString();
    const planned = new ImportPlan({ store, cipher, tenantId, doc, replace: options.replace, protectedIds, now });
    await planned.make();
    if (options.dryRun) return planned.plan(true);
    await planned.prepare();
    // The last turn before the write: the store's checks again, and what changed meanwhile planned again.
    this.check(tenantId, doc, keptOnReplace);
    this.checkNoLockout(tenantId, doc, protectedIds);
    planned.settle();
    const plan = planned.plan(false);
    if (plan.changes.length === 0) return plan;
    const clearAll = options.replace;
    await store.write((batch) => {
      requireTenantRow(store, batch, tenantId);
      for (const change of plan.changes) {
        const collection = collectionOf(store, change.kind);
        if (change.action === 'delete') batch.delete(collection, tenantId, change.id);
        else {
          const record = planned.records.get(`${change.kind}\u0000${change.id}`)!;
          batch.put(collection, withAuthors(change.kind, record, batch.get(collection, tenantId, change.id)));
        }
      }
      // The file holds no transactions or async results: a tenant made equal to it has none.
      if (clearAll) {
        deleteAll(batch, store.transactions, tenantId);
        deleteAll(batch, store.results, tenantId);
      }
    });
    await this.unloadChanged(plan);
    return plan;
  }

  /** Empties the tenant: everything but the caller's Application and the bootstrap ones. */
  reset(caller: Caller, dryRun: boolean): Promise<StatePlan> {
    return this.importState(
      caller,
      { svc_state: 1, applications: [], reactors: [], proxies: [], tokens: [] },
      { dryRun, replace: true },
    );
  }

  /**
   * An Application of the file whose key is already that of one of the tenant's under another id
   * (a new emulator started with the same `--management-key`) is that one: its entry and what is
   * bound to it take the tenant's id, so the key keeps its Application and nothing is held twice.
   */
  private adoptSameKeys(tenantId: string, doc: StateDocument): StateDocument {
    const renamed = new Map<string, string>();
    for (const app of doc.applications) {
      const holder = this.deps.store.applications.findBy('key', app.key_hash);
      if (holder && holder.tenant_id === tenantId && holder.id !== app.id) renamed.set(app.id, holder.id);
    }
    if (renamed.size === 0) return doc;
    const to = (id: string | null) => (id === null ? null : (renamed.get(id) ?? id));
    return {
      ...doc,
      applications: doc.applications.map((app) => ({ ...app, id: to(app.id)! })),
      reactors: doc.reactors.map((reactor) => ({ ...reactor, application_id: to(reactor.application_id) })),
      proxies: doc.proxies.map((proxy) => ({ ...proxy, application_id: to(proxy.application_id) })),
    };
  }

  /** Refuses, before anything is written, what the write could not keep its promises with. */
  private check(tenantId: string, doc: StateDocument, keptOnReplace: string[] | undefined): void {
    const { store } = this.deps;
    // What a reactor or proxy may be bound to once the import is done.
    const staying = keptOnReplace ?? store.applications.list(tenantId).map((app) => app.id);
    const applications = new Set([...doc.applications.map((app) => app.id), ...staying]);
    for (const code of [...doc.reactors, ...doc.proxies]) {
      if (code.application_id !== null && !applications.has(code.application_id))
        throw badFile(
          `${code.name} is bound to Application ${code.application_id}, which is neither in the file nor kept in the tenant`,
        );
    }
    for (const app of doc.applications) {
      const holder = store.applications.findBy('key', app.key_hash);
      if (holder && (holder.tenant_id !== tenantId || holder.id !== app.id))
        throw conflict(
          `the key of Application ${app.name} already belongs to ${heldBy(holder, tenantId, 'an', 'Application')}`,
        );
    }
    for (const proxy of doc.proxies) {
      const holder = store.proxies.findBy('key', hashKey(proxy.key));
      if (holder && (holder.tenant_id !== tenantId || holder.id !== proxy.id))
        throw conflict(`the key of proxy ${proxy.name} already belongs to ${heldBy(holder, tenantId, 'a', 'proxy')}`);
    }
  }

  /**
   * A kept Application (the caller's, a bootstrap one) may be renamed or given other grants by the
   * file, but not another key, type or expiry: its key would stop working, as if it were deleted.
   */
  private checkNoLockout(tenantId: string, doc: StateDocument, kept: Map<string, string>): void {
    for (const entry of doc.applications) {
      const reason = kept.get(entry.id);
      const current = reason && this.deps.store.applications.get(tenantId, entry.id);
      if (!current) continue;
      const changed = [
        entry.key_hash !== current.key_hash && 'key',
        entry.type !== current.type && 'type',
        (entry.expires_at ?? null) !== (current.expires_at ?? null) && 'expiry',
      ].filter(Boolean);
      if (changed.length > 0)
        throw conflict(
          `it gives Application ${entry.name} (${reason}) another ${changed.join(', ')}, which would lock it out`,
        );
    }
  }

  private protectedApplications(caller: Caller): Map<string, string> {
    const kept = new Map<string, string>();
    const bootstrap = this.deps.store.tenants.get(caller.tenantId, caller.tenantId)?.bootstrap;
    if (bootstrap?.management) kept.set(bootstrap.management, "the tenant's bootstrap management Application");
    if (bootstrap?.private) kept.set(bootstrap.private, "the tenant's bootstrap private Application");
    kept.set(caller.application.id, 'the Application whose key makes this call');
    return kept;
  }

  /** Code that changed or went is unloaded: the next call loads what the store now holds. */
  private async unloadChanged(plan: StatePlan): Promise<void> {
    const { runtime } = this.deps;
    for (const change of plan.changes) {
      if (change.action === 'create') continue;
      const gone =
        change.action === 'delete' ? `${change.kind === 'reactors' ? 'reactor' : 'proxy'} ${change.name}` : undefined;
      if (change.kind === 'reactors') await runtime.unload(change.id, gone);
      if (change.kind === 'proxies') {
        await runtime.unload(transformId(change.id, 'request'), gone);
        await runtime.unload(transformId(change.id, 'response'), gone);
      }
    }
  }
}

/** The record to put, with who made it and who last changed it as the record it replaces says. */
function withAuthors(kind: StateKind, record: TenantRecord, existing: TenantRecord | undefined): TenantRecord {
  const { created_by, modified_by } = (existing ?? {}) as { created_by?: string; modified_by?: string };
  return {
    ...record,
    ...(created_by !== undefined && { created_by }),
    ...(modified_by !== undefined && kind !== 'tokens' && { modified_by }),
  };
}

function deleteAll<T extends TenantRecord>(batch: WriteBatch, collection: Collection<T>, tenantId: string): void {
  for (const record of collection.list(tenantId)) batch.delete(collection, tenantId, record.id);
}

function badFile(detail: string): HttpError {
  return new HttpError(422, `The state cannot be imported: ${detail}. Nothing changed.`);
}

/** Who holds a key: named only within the caller's tenant (another tenant's ids are not the caller's to learn). */
function heldBy(holder: { tenant_id: string; id: string }, tenantId: string, article: string, kind: string): string {
  return holder.tenant_id === tenantId
    ? `another ${kind} of this tenant (${holder.id})`
    : `${article} ${kind} of another tenant`;
}

function conflict(detail: string): HttpError {
  return new HttpError(409, `The state cannot be imported: ${detail}. Nothing changed.`);
}

/** Each Application's grants checked as a create's would be: a bad one is a bad file naming it. */
function checkApplicationGrants(doc: StateDocument): void {
  for (const app of doc.applications) {
    try {
      checkGrants(app.type, { permissions: app.permissions, rules: app.rules });
    } catch (error) {
      if (error instanceof HttpError) throw badFile(`Application ${app.name}: ${error.detail.replace(/\.$/, '')}`);
      throw error;
    }
  }
}
