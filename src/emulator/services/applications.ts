import { randomUUID } from 'node:crypto';
import { API_KEY_HEADER } from '../../api/headers.js';
import type { ApplicationType } from '../../api/permissions.js';
import type { Application, CreateApplicationBody, ListQuery, Page, UpdateApplicationBody } from '../../api/types.js';
import { EmulatorError, FieldErrors, HttpError, notFound } from '../errors.js';
import type { WriteBatch } from '../store/batch.js';
import type { Store } from '../store/store.js';
import type { ApplicationRecord } from '../store/records.js';
import { explainAccess } from './access.js';
import { checkGrants } from './grants.js';
import { KeyHashes, generateKey, hashKey } from './keys.js';
import { filterItems, paginate } from './pagination.js';
import { TenantClocks } from './tenant-clocks.js';
import type { TokenContext } from './token-view.js';

/** Who is calling: the Application a key resolved to, and so its tenant. */
export interface Caller {
  tenantId: string;
  application: ApplicationRecord;
}

export type { Clock } from './tenant-clocks.js';

/** Who a piece of running code belongs to, for the log: a reactor, or a proxy's transform. */
export interface CodeOwner {
  name: string;
  tenantId: string;
}

/** An Application made outside any request: the bootstrap's two, the admin route's. */
export interface ProvisionSpec {
  name: string;
  type: ApplicationType;
  permissions: string[];
  key?: string;
  id?: string;
}

/** The largest delay setTimeout accepts (~24.8 days); later expiries are re-armed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Applications: CRUD, keys and expiry. Keys are only ever held as SHA-256; the plaintext is
 * returned once, by create and regenerate. An Application whose `expires_at` has passed is deleted
 * (with its key) by a timer, and treated as gone by every read before that timer fires.
 */
export class ApplicationService {
  private expiryTimer: NodeJS.Timeout | undefined;
  private readonly keyHashes = new KeyHashes();

  constructor(
    private readonly store: Store,
    private readonly clocks: TenantClocks = new TenantClocks(),
  ) {}

  /** Resolves an API key to its Application, or undefined for an unknown or expired key. */
  authenticate(key: string): ApplicationRecord | undefined {
    const app = this.store.applications.findBy('key', this.keyHashes.of(key));
    return app && !this.isExpired(app) ? app : undefined;
  }

  async create(caller: Caller, body: CreateApplicationBody): Promise<Application> {
    const grants = checkGrants(body.type, { permissions: body.permissions ?? [], rules: body.rules ?? [] });
    const expiresAt = this.checkExpiry(caller.tenantId, body.expires_at ?? null);
    const key = generateKey(body.type);
    const now = this.clocks.now(caller.tenantId).toISOString();
    const record: ApplicationRecord = {
      id: randomUUID(),
      tenant_id: caller.tenantId,
      name: body.name,
      type: body.type,
      ...grants,
      created_by: caller.application.id,
      created_at: now,
      modified_by: caller.application.id,
      modified_at: now,
      expires_at: expiresAt,
      key_hash: hashKey(key),
    };
    await this.store.applications.put(record);
    this.armExpiry();
    return toWire(record, key);
  }

  list(caller: Caller, query: ListQuery): Page<Application> {
    const live = this.store.applications.list(caller.tenantId).filter((app) => !this.isExpired(app));
    return paginate(
      filterItems(live, query).map((app) => toWire(app)),
      query,
    );
  }

  /** An Application of the caller's tenant by id or else by name (POST /_emulator/explain), or undefined. */
  named(caller: Caller, given: string): ApplicationRecord | undefined {
    const live = this.store.applications.list(caller.tenantId).filter((app) => !this.isExpired(app));
    return live.find((app) => app.id === given.toLowerCase()) ?? live.find((app) => app.name === given);
  }

  get(caller: Caller, id: string): Application {
    return toWire(this.find(caller, id));
  }

  async update(caller: Caller, id: string, body: UpdateApplicationBody): Promise<Application> {
    this.find(caller, id);
    // Built from the Application as it is when the write is saved: a key regenerated meanwhile stays.
    const record = await this.store.write((batch) => {
      const current = this.findIn(batch, caller, id);
      const grants = checkGrants(current.type, {
        permissions: body.permissions ?? current.permissions,
        rules: body.rules ?? current.rules,
      });
      const updated: ApplicationRecord = {
        ...current,
        name: body.name,
        ...grants,
        modified_by: caller.application.id,
        modified_at: this.clocks.now(caller.tenantId).toISOString(),
      };
      batch.put(this.store.applications, updated);
      return updated;
    });
    return toWire(record);
  }

  /** Issues a new key; the old one stops working as soon as this returns. */
  async regenerate(caller: Caller, id: string): Promise<Application> {
    const current = this.find(caller, id);
    const key = generateKey(current.type);
    const record = await this.store.write((batch) => {
      const updated: ApplicationRecord = {
        ...this.findIn(batch, caller, id),
        key_hash: hashKey(key),
        modified_by: caller.application.id,
        modified_at: this.clocks.now(caller.tenantId).toISOString(),
      };
      batch.put(this.store.applications, updated);
      return updated;
    });
    return toWire(record, key);
  }

  async delete(caller: Caller, id: string): Promise<void> {
    this.find(caller, id);
    await this.store.write((batch) =>
      batch.delete(this.store.applications, caller.tenantId, this.findIn(batch, caller, id).id),
    );
  }

  /**
   * Creates an Application outside any request (bootstrap, admin route). With `key` given it uses
   * exactly that key, so that CI runs are deterministic.
   */
  async provision(tenantId: string, spec: ProvisionSpec): Promise<{ application: ApplicationRecord; key: string }> {
    return this.store.write((batch) => this.provisionIn(batch, tenantId, spec));
  }

  /** `provision` as part of a larger write (a tenant and its Applications are saved together). */
  provisionIn(
    batch: WriteBatch,
    tenantId: string,
    spec: ProvisionSpec,
  ): { application: ApplicationRecord; key: string } {
    const key = spec.key ?? generateKey(spec.type);
    if (batch.findBy(this.store.applications, 'key', hashKey(key))) {
      throw new HttpError(409, 'That key already belongs to an Application; give another one.');
    }
    const now = this.clocks.now(tenantId).toISOString();
    const application: ApplicationRecord = {
      id: spec.id ?? randomUUID(),
      tenant_id: tenantId,
      name: spec.name,
      type: spec.type,
      permissions: [...spec.permissions],
      rules: [],
      created_at: now,
      modified_at: now,
      expires_at: null,
      key_hash: hashKey(key),
    };
    batch.put(this.store.applications, application);
    return { application, key };
  }

  /** Makes `key` the key of an existing Application (a bootstrap key given again on restart), in a larger write. */
  assignKeyIn(batch: WriteBatch, application: ApplicationRecord, key: string): void {
    const keyHash = hashKey(key);
    const current = batch.get(this.store.applications, application.tenant_id, application.id) ?? application;
    if (current.key_hash === keyHash) return;
    const owner = batch.findBy(this.store.applications, 'key', keyHash);
    if (owner && owner.id !== application.id) {
      throw new EmulatorError(
        `The key given for ${application.name} already belongs to Application ${owner.id}; give another key.`,
      );
    }
    batch.put(this.store.applications, {
      ...current,
      key_hash: keyHash,
      modified_at: this.clocks.now(current.tenant_id).toISOString(),
    });
  }

  /** Deletes every expired Application and arms a timer for the next expiry. */
  async sweep(): Promise<number> {
    const expired = [...this.store.applications.everything()].filter((app) => this.isExpired(app));
    const removed =
      expired.length === 0
        ? 0
        : await this.store.write((batch) => {
            let count = 0;
            for (const app of expired) {
              const current = batch.get(this.store.applications, app.tenant_id, app.id);
              if (current && this.isExpired(current) && batch.delete(this.store.applications, app.tenant_id, app.id))
                count++;
            }
            return count;
          });
    this.armExpiry();
    return removed;
  }

  dispose(): void {
    clearTimeout(this.expiryTimer);
    this.expiryTimer = undefined;
  }

  private find(caller: Caller, id: string): ApplicationRecord {
    const app = this.store.applications.get(caller.tenantId, id.toLowerCase());
    if (!app || this.isExpired(app)) throw notFound('Application', id);
    return app;
  }

  /** `find` when a write is saved: the Application as it is then, 404 if gone meanwhile. */
  private findIn(batch: WriteBatch, caller: Caller, id: string): ApplicationRecord {
    const app = batch.get(this.store.applications, caller.tenantId, id.toLowerCase());
    if (!app || this.isExpired(app)) throw notFound('Application', id);
    return app;
  }

  private isExpired(app: ApplicationRecord): boolean {
    return app.expires_at != null && Date.parse(app.expires_at) <= this.clocks.ms(app.tenant_id);
  }

  private checkExpiry(tenantId: string, expiresAt: string | null): string | null {
    if (expiresAt === null) return null;
    const errors = new FieldErrors();
    const at = Date.parse(expiresAt);
    // Date cannot read a leap second: the schema refuses one, and any date it cannot read is a 400 here too, not a RangeError.
    if (Number.isNaN(at)) errors.add('expires_at', 'must be a date-time JavaScript can read (seconds 00-59)');
    else if (at <= this.clocks.ms(tenantId)) errors.add('expires_at', 'must be in the future');
    errors.throwIfAny();
    return new Date(expiresAt).toISOString();
  }

  private armExpiry(): void {
    clearTimeout(this.expiryTimer);
    // Each Application's time left on its tenant's clock.
    let next = Infinity;
    for (const app of this.store.applications.everything()) {
      if (app.expires_at != null) next = Math.min(next, Date.parse(app.expires_at) - this.clocks.ms(app.tenant_id));
    }
    if (next === Infinity) return;
    const delay = Math.min(Math.max(next, 0), MAX_TIMER_MS);
    this.expiryTimer = setTimeout(() => void this.sweep().catch(() => {}), delay);
    this.expiryTimer.unref();
  }
}

/** The wire shape: never the key hash; the key only when just issued. */
export function toWire(record: ApplicationRecord, key?: string): Application {
  const { key_hash: _hash, ...application } = record;
  return key === undefined ? application : { ...application, key };
}

/**
 * The caller an `SVC-API-KEY` value names: 401 when it is missing (`missing`, the words for it) or
 * unknown. Every path authenticates here: the HTTP routes and the proxy pipeline.
 */
export function callerByKey(
  applications: ApplicationService,
  key: string | string[] | undefined,
  missing = `Send the API key of an Application in the ${API_KEY_HEADER.toUpperCase()} header.`,
): Caller {
  if (typeof key !== 'string' || key === '') throw unauthenticated(missing, 'no API key was sent');
  const application = applications.authenticate(key);
  if (!application)
    throw unauthenticated(
      `The API key in ${API_KEY_HEADER.toUpperCase()} is not valid (unknown, regenerated or expired).`,
      'the API key names no Application (unknown, regenerated or expired)',
    );
  return { tenantId: application.tenant_id, application };
}

/** A 401 and its explanation: no Application, and why. */
function unauthenticated(detail: string, reason: string): HttpError {
  return new HttpError(401, detail, {
    extensions: { explanation: { decision: 'unauthenticated', reason, application: null } },
  });
}

/** A 403 unless the caller holds the permission a route needs (none: any caller). */
export function requirePermission(caller: Caller, permission: string | undefined): void {
  const { application } = caller;
  if (permission && !application.permissions.includes(permission)) {
    throw new HttpError(403, `This ${application.type} Application lacks the ${permission} permission.`, {
      extensions: { explanation: explainAccess(application, permission) },
    });
  }
}

/** The token context of a caller and the value of its `SVC-TRANSACTION-ID` header. */
export function tokenContextOf(caller: Caller, transaction: string | string[] | undefined): TokenContext {
  return { caller, transactionId: typeof transaction === 'string' && transaction !== '' ? transaction : undefined };
}
