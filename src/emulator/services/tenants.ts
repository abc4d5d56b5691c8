import { randomUUID } from 'node:crypto';
import { PERMISSIONS_BY_TYPE } from '../../api/permissions.js';
import type { CreatedTenant } from '../../api/types.js';
import { EmulatorError } from '../errors.js';
import type { WriteBatch } from '../store/batch.js';
import type { Store } from '../store/store.js';
import type { StoredTenant } from '../store/records.js';
import type { Cipher } from '../crypto/cipher.js';
import type { ApplicationService, Caller } from './applications.js';
import { type Clock, type TenantClock, type TenantClocks, tenantClocks } from './tenant-clocks.js';
import { hashKey } from './keys.js';
import type { ProxyService } from './proxies.js';
import type { ReactorService } from './reactors.js';
import type { ReactorResults } from './reactor-results.js';
import type { WebhookService } from './webhooks.js';
import type { ExplanationStore } from './explanations.js';
import { deleteTenantRows, writeFork, type ForkedTenant } from './tenant-fork.js';

export type { ForkedTenant } from './tenant-fork.js';
export type { TenantClock } from './tenant-clocks.js';

/** What forking and removing tenants needs beyond the store (svc/testing's tenants). */
export interface TenantForkDeps {
  cipher: Cipher;
  reactors: ReactorService;
  proxies: ProxyService;
  results: ReactorResults;
  webhooks: WebhookService;
  /** A deleted tenant's kept refusals go with it. */
  explanations: ExplanationStore;
}

export interface TenantKeys {
  managementKey?: string;
  privateKey?: string;
}

export interface BootstrapResult {
  tenantId: string;
  /** True when this start created the tenant (an empty store). */
  created: boolean;
  /** Keys this start generated: to be shown once. Keys that were given are not repeated. */
  generated: TenantKeys;
  /** The keys in force that are known in plaintext (generated now, or given). */
  keys: TenantKeys;
}

/**
 * Tenants and their two starter Applications: a management one (all application, proxy and
 * reactor permissions) and a private one (all token permissions).
 */
export class TenantService {
  /** Each tenant's clock. */
  readonly clocks: TenantClocks;
  /** Told of each removed tenant: what the emulator keeps per tenant outside the services (connections, kept calls). */
  private readonly removedListeners: ((tenantId: string) => void)[] = [];

  constructor(
    private readonly store: Store,
    private readonly applications: ApplicationService,
    clock?: Clock | TenantClocks,
    private readonly forks?: TenantForkDeps,
  ) {
    this.clocks = tenantClocks(clock);
  }

  /**
   * A new tenant copied from `templateId` in one write (tenant-fork.ts): its Applications with keys
   * of their own, its reactors and proxies; none of its tokens, results or events. Its code runs in
   * the template's sandbox processes, so that its first call starts no process.
   */
  async fork(templateId: string, name: string): Promise<ForkedTenant> {
    const forks = this.forksOrThrow();
    const template = this.store.tenants.get(templateId, templateId);
    if (!template) throw new EmulatorError(`No tenant ${templateId} to fork.`);
    // A fork's clock is the emulator's, whatever the template's: it starts at today.
    const now = this.clocks.emulatorNow().toISOString();
    return this.store.write((batch) => writeFork(this.store, forks.cipher, batch, template, name, now));
  }

  /**
   * Deletes a tenant and everything it holds; its code is unloaded at once (calls in flight end
   * with a 409), its webhook deliveries end (attempts in flight aborted, retries not made, as a stop
   * ends them) and resolves once they have. Returns false when there was no such tenant.
   */
  async remove(tenantId: string): Promise<boolean> {
    const forks = this.forksOrThrow();
    const row = this.store.tenants.get(tenantId, tenantId);
    if (!row) return false;
    const application = this.store.applications.list(tenantId)[0];
    if (application) {
      // Through the services' own deletes: each forgets and unloads its code as a delete does.
      const caller: Caller = { tenantId, application };
      for (const reactor of this.store.reactors.list(tenantId)) await forks.reactors.delete(caller, reactor.id);
      for (const proxy of this.store.proxies.list(tenantId)) await forks.proxies.delete(caller, proxy.id);
    }
    await this.store.write((batch) => deleteTenantRows(this.store, batch, tenantId));
    // Once its rows are gone, what still runs of the tenant sees it deleted and ends.
    forks.webhooks.stopTenant(tenantId);
    this.clocks.forget(tenantId);
    forks.explanations.forget(tenantId);
    for (const listener of this.removedListeners) listener(tenantId);
    await forks.results.pending.settled(tenantId);
    return true;
  }

  /** Calls `listener` with each tenant `remove` deletes, by whichever door (svc/testing, the admin route). */
  onRemoved(listener: (tenantId: string) => void): void {
    this.removedListeners.push(listener);
  }

  /** The id of the tenant `svc serve` bootstrapped (the oldest), which no admin route deletes. */
  bootstrappedId(): string | undefined {
    return this.first()?.id;
  }

  /**
   * Resolves once the tenant's asynchronous invocations and webhook deliveries (retries too) have
   * ended; at once for a tenant that does not exist (deleted: its work was ended with it).
   */
  settled(tenantId: string): Promise<void> {
    const forks = this.forksOrThrow();
    if (!this.store.tenants.get(tenantId, tenantId)) return Promise.resolve();
    return forks.results.pending.settled(tenantId);
  }

  /** Whether there is a tenant `tenantId`. */
  has(tenantId: string): boolean {
    return this.store.tenants.get(tenantId, tenantId) !== undefined;
  }

  /** An EmulatorError unless there is a tenant `tenantId`. */
  requireTenant(tenantId: string): void {
    if (!this.store.tenants.get(tenantId, tenantId)) throw new EmulatorError(`No tenant ${tenantId}.`);
  }

  /** The tenant's webhook signing secret (made on first use). */
  webhookSecret(tenantId: string): Promise<string> {
    return this.forksOrThrow().webhooks.secret(tenantId);
  }

  private forksOrThrow(): TenantForkDeps {
    if (!this.forks) throw new EmulatorError('This TenantService was made without what forking needs.');
    return this.forks;
  }

  /** Creates a tenant and its two starter Applications, saved together or not at all. */
  async create(name: string, keys: TenantKeys = {}): Promise<CreatedTenant> {
    return this.store.write((batch) => {
      const tenant: StoredTenant = {
        id: randomUUID(),
        tenant_id: '',
        name,
        created_at: this.clocks.emulatorNow().toISOString(),
      };
      tenant.tenant_id = tenant.id;
      const management = this.provisionIn(batch, tenant.id, 'management', keys.managementKey);
      const priv = this.provisionIn(batch, tenant.id, 'private', keys.privateKey);
      tenant.bootstrap = { management: management.application.id, private: priv.application.id };
      batch.put(this.store.tenants, tenant);
      return {
        id: tenant.id,
        name: tenant.name,
        created_at: tenant.created_at,
        management_key: management.key,
        private_key: priv.key,
      };
    });
  }

  /**
   * On an empty store, creates the first tenant. On a store that has one, applies the keys given
   * (so `--management-key K` always means K works), re-creating a starter Application that was deleted.
   */
  async bootstrap(keys: TenantKeys): Promise<BootstrapResult> {
    const first = this.first();
    if (!first) {
      const tenant = await this.create('default', keys);
      const made = { managementKey: tenant.management_key, privateKey: tenant.private_key };
      return {
        tenantId: tenant.id,
        created: true,
        keys: made,
        generated: {
          ...(keys.managementKey === undefined && { managementKey: made.managementKey }),
          ...(keys.privateKey === undefined && { privateKey: made.privateKey }),
        },
      };
    }
    if (keys.managementKey !== undefined || keys.privateKey !== undefined) {
      await this.store.write((batch) => {
        // The start's own keys: never refused by a full quota, which would fail the start.
        batch.bookkeeping();
        const tenant = batch.get(this.store.tenants, first.id, first.id) ?? first;
        const bootstrap = { ...tenant.bootstrap };
        this.applyKey(batch, tenant, bootstrap, 'management', keys.managementKey);
        this.applyKey(batch, tenant, bootstrap, 'private', keys.privateKey);
        if (bootstrap.management !== tenant.bootstrap?.management || bootstrap.private !== tenant.bootstrap?.private) {
          batch.put(this.store.tenants, { ...tenant, bootstrap });
        }
      });
    }
    return { tenantId: first.id, created: false, generated: {}, keys };
  }

  /**
   * Rebuilds the row of every tenant whose records are in the store but whose row is not (its
   * `tenants.json` deleted, or moved aside as damaged). Without it the bootstrap would start a new
   * tenant beside the old one's data. Returns what it did, to be told to the user.
   */
  async recoverMissing(): Promise<string[]> {
    const missing = new Map<string, string>();
    const sources = [
      this.store.applications,
      this.store.tokens,
      this.store.transactions,
      this.store.reactors,
      this.store.proxies,
      this.store.results,
    ];
    for (const collection of sources) {
      for (const record of collection.everything()) {
        if (this.store.tenants.get(record.tenant_id, record.tenant_id)) continue;
        const earliest = missing.get(record.tenant_id);
        if (earliest === undefined || record.created_at < earliest) missing.set(record.tenant_id, record.created_at);
      }
    }
    if (missing.size === 0) return [];
    await this.store.write((batch) => {
      batch.bookkeeping();
      for (const [id, createdAt] of missing) {
        const apps = this.store.applications.list(id);
        const starter = (name: string, type: string) => apps.find((app) => app.name === name && app.type === type)?.id;
        const management = starter('svc management', 'management');
        const priv = starter('svc private', 'private');
        batch.put(this.store.tenants, {
          id,
          tenant_id: id,
          name: 'recovered',
          created_at: createdAt,
          bootstrap: { ...(management && { management }), ...(priv && { private: priv }) },
        });
      }
    });
    return [...missing.keys()].map(
      (id) =>
        `The store holds Applications or tokens of tenant ${id} but no row for it in tenants.json (deleted or ` +
        `replaced?): rebuilt it, named "recovered". Its name and webhook signing secret could not be recovered (a new ` +
        `secret is made); to get them back, stop svc and restore tenants.json from a backup.`,
    );
  }

  /** Makes `key` work as the tenant's `kind` starter Application, re-creating or adopting one if need be. */
  private applyKey(
    batch: WriteBatch,
    tenant: StoredTenant,
    bootstrap: NonNullable<StoredTenant['bootstrap']>,
    kind: 'management' | 'private',
    key: string | undefined,
  ): void {
    if (key === undefined) return;
    const id = bootstrap[kind];
    const existing = id ? batch.get(this.store.applications, tenant.id, id) : undefined;
    if (existing) {
      this.applications.assignKeyIn(batch, existing, key);
      return;
    }
    // The key may be an Application's already whose tenant row forgot it (a rebuilt tenants.json).
    const owner = batch.findBy(this.store.applications, 'key', hashKey(key));
    if (owner && owner.tenant_id === tenant.id && owner.type === kind) {
      bootstrap[kind] = owner.id;
      return;
    }
    if (owner) {
      throw new EmulatorError(
        `The ${kind} key given already belongs to Application ${owner.id} (a ${owner.type} one); give another key.`,
      );
    }
    bootstrap[kind] = this.provisionIn(batch, tenant.id, kind, key).application.id;
  }

  /**
   * The starter Applications of `tenantId` that no key in `known` opens (the keys given, and those
   * saved in credentials.json): their keys exist nowhere in plaintext, so nobody can use them.
   */
  lostKeys(tenantId: string, known: readonly (string | undefined)[]): { kind: 'management' | 'private'; id: string }[] {
    const tenant = this.store.tenants.get(tenantId, tenantId);
    const hashes = new Set(known.filter((key) => key !== undefined).map(hashKey));
    const lost: { kind: 'management' | 'private'; id: string }[] = [];
    for (const kind of ['management', 'private'] as const) {
      const id = tenant?.bootstrap?.[kind];
      const application = id === undefined ? undefined : this.store.applications.get(tenantId, id);
      if (application && !hashes.has(application.key_hash)) lost.push({ kind, id: application.id });
    }
    return lost;
  }

  /** Every tenant, the oldest (the one `svc serve` bootstrapped) first: ids, names and times, never a key. */
  list(): { id: string; name: string; created_at: string; bootstrap: boolean }[] {
    const first = this.first();
    return [...this.store.tenants.everything()]
      .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0))
      .map((tenant) => ({
        id: tenant.id,
        name: tenant.name,
        created_at: tenant.created_at,
        bootstrap: tenant === first,
      }));
  }

  /** The oldest tenant: the one `svc serve` bootstrapped. */
  private first(): StoredTenant | undefined {
    let oldest: StoredTenant | undefined;
    for (const tenant of this.store.tenants.everything()) {
      if (!oldest || tenant.created_at < oldest.created_at) oldest = tenant;
    }
    return oldest;
  }

  private provisionIn(batch: WriteBatch, tenantId: string, kind: 'management' | 'private', key: string | undefined) {
    return this.applications.provisionIn(batch, tenantId, {
      name: `svc ${kind}`,
      type: kind,
      permissions: [...PERMISSIONS_BY_TYPE[kind]],
      ...(key !== undefined && { key }),
    });
  }
}

/**
 * `emulator.tenants.clock(id)`: `current()` is the tenants once the emulator started (undefined
 * before), `started()` waits for the start (and refuses once stopped); an unknown tenant is refused.
 */
export function tenantClock(
  tenantId: string,
  current: () => TenantService | undefined,
  started: () => Promise<TenantService>,
): TenantClock {
  const clocks = async () => {
    const tenants = await started();
    tenants.requireTenant(tenantId);
    return tenants.clocks;
  };
  return {
    now() {
      const tenants = current();
      if (!tenants) throw new EmulatorError('The emulator has not started: await emulator.ready first.');
      return tenants.clocks.now(tenantId);
    },
    advance: async (ms) => (await clocks()).advance(tenantId, ms),
    set: async (to) => (await clocks()).set(tenantId, to),
  };
}
