import { forkedTenantSchema } from '../../../api/answer-schemas.js';
import { forkTenantSchema, tenantParamsSchema } from '../../../api/schemas.js';
import type { Services } from '../../services/index.js';
import { HttpError } from '../../errors.js';
import type { Exchange } from '../exchange.js';
import { type Route, callerOf, empty, json } from '../route.js';

/**
 * A tenant per test for clients in any language: a fork of a tenant (the copy svc/testing's
 * `svc.tenant()` makes, sharing the template's sandbox processes) and the delete that disposes of
 * it. Both are admin routes (loopback only) and take the named tenant's own management key: a
 * caller who holds it could read and copy all of it anyway.
 */
export const tenantForkRoutes: readonly Route[] = [
  {
    method: 'POST',
    path: '/_emulator/tenants/:tenant_id/forks',
    summary:
      "Fork a tenant: a new one with copies of its Applications (new keys), reactors and proxies, none of its tokens (the tenant's management key, loopback only).",
    schema: { params: tenantParamsSchema, body: forkTenantSchema },
    admin: true,
    responses: {
      201: {
        description: 'The fork, its starter keys, and every Application (with its key), reactor and proxy it copied.',
        schema: forkedTenantSchema,
      },
    },
    problems: [404],
    handler: async (call, { services }) => {
      const tenantId = ownTenant(call, services, 'forked');
      const body = (call.body as { name?: string } | null | undefined) ?? {};
      return json(await services.tenants.fork(tenantId, body.name ?? 'fork'), 201);
    },
  },
  {
    method: 'DELETE',
    path: '/_emulator/tenants/:tenant_id',
    summary:
      "Delete a tenant and all it holds, its code unloaded, as svc/testing's dispose does (the tenant's management key, loopback only).",
    schema: { params: tenantParamsSchema },
    admin: true,
    responses: { 204: { description: 'Deleted.' } },
    problems: [404, 409],
    handler: async (call, { services }) => {
      const tenantId = ownTenant(call, services, 'deleted');
      if (tenantId === services.tenants.bootstrappedId()) {
        throw new HttpError(
          409,
          `Tenant ${tenantId} is the one the emulator bootstrapped at its start (its keys are the ones svc serve gave): it is not deleted.`,
        );
      }
      await services.tenants.remove(tenantId);
      return empty(204);
    },
  },
];

/**
 * The tenant the path names, once it exists (else 404) and the caller holds its management key
 * (else 403: another tenant's key, or a key of another type).
 */
function ownTenant(call: Exchange, services: Services, done: string): string {
  const tenantId = call.params.tenant_id ?? '';
  const caller = callerOf(call);
  if (!services.tenants.has(tenantId)) {
    throw new HttpError(404, `No tenant ${tenantId}.`);
  }
  if (caller.tenantId !== tenantId) {
    throw new HttpError(403, `A tenant is ${done} with its own management key; this key is another tenant's.`);
  }
  if (caller.application.type !== 'management') {
    throw new HttpError(
      403,
      `A tenant is ${done} with its management key; this key is a ${caller.application.type} one.`,
    );
  }
  return tenantId;
}
