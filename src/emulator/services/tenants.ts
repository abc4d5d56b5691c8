import { randomUUID } from 'node:crypto';
import { PERMISSIONS_BY_TYPE } from '../../api/permissions.js';
import type { CreatedTenant } from '../../api/types.js';
import type { Store } from '../store/store.js';
import type { TenantRow } from '../store/records.js';
import type { ApplicationService, Clock } from './applications.js';

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
  constructor(
    private readonly store: Store,
    private readonly applications: ApplicationService,
    private readonly clock: Clock = () => new Date(),
  ) {}

  async create(name: string, keys: TenantKeys = {}): Promise<CreatedTenant> {
    const tenant: TenantRow = { id: randomUUID(), tenant_id: '', name, created_at: this.clock().toISOString() };
    tenant.tenant_id = tenant.id;
    const management = await this.provisionManagement(tenant.id, keys.managementKey);
    const priv = await this.provisionPrivate(tenant.id, keys.privateKey);
    tenant.bootstrap = { management: management.application.id, private: priv.application.id };
    await this.store.tenants.put(tenant);
    return {
      id: tenant.id,
      name: tenant.name,
      created_at: tenant.created_at,
      management_key: management.key,
      private_key: priv.key,
    };
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
    const bootstrap = { ...first.bootstrap };
    const apply = async (kind: 'management' | 'private', key: string | undefined) => {
      if (key === undefined) return;
      const existing = bootstrap[kind] ? this.store.applications.get(first.id, bootstrap[kind]) : undefined;
      if (existing) {
        await this.applications.assignKey(existing, key);
      } else {
        const made = kind === 'management'
          ? await this.provisionManagement(first.id, key)
          : await this.provisionPrivate(first.id, key);
        bootstrap[kind] = made.application.id;
      }
    };
    await apply('management', keys.managementKey);
    await apply('private', keys.privateKey);
    if (bootstrap.management !== first.bootstrap?.management || bootstrap.private !== first.bootstrap?.private) {
      await this.store.tenants.put({ ...first, bootstrap });
    }
    return { tenantId: first.id, created: false, generated: {}, keys };
  }

  exists(id: string): boolean {
    return this.store.tenants.get(id, id) !== undefined;
  }

  /** The oldest tenant: the one `svc serve` bootstrapped. */
  private first(): TenantRow | undefined {
    let oldest: TenantRow | undefined;
    for (const tenant of this.store.tenants.everything()) {
      if (!oldest || tenant.created_at < oldest.created_at) oldest = tenant;
    }
    return oldest;
  }

  private provisionManagement(tenantId: string, key: string | undefined) {
    return this.applications.provision(tenantId, {
      name: 'svc management',
      type: 'management',
      permissions: [...PERMISSIONS_BY_TYPE.management],
      ...(key !== undefined && { key }),
    });
  }

  private provisionPrivate(tenantId: string, key: string | undefined) {
    return this.applications.provision(tenantId, {
      name: 'svc private',
      type: 'private',
      permissions: [...PERMISSIONS_BY_TYPE.private],
      ...(key !== undefined && { key }),
    });
  }
}
