import {
  createdTenantSchema,
  explainAnswerSchema,
  healthSchema,
  quotaUsageSchema,
  storedExplanationSchema,
  tenantListSchema,
  webhookSecretSchema,
} from '../../../api/answer-schemas.js';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { PROXY_HOP_HEADER } from '../../../api/headers.js';
import { createTenantSchema } from '../../../api/schemas.js';
import {
  type ExplainRequest,
  explainRequestSchema,
  explanationParamsSchema,
  type StoredExplanation,
} from '../../../api/explanation.js';
import type { CreatedTenant } from '../../../api/types.js';
import { explainHypothetical } from '../../services/explain-hypothetical.js';
import { HttpError, fieldError } from '../../errors.js';
import { healthAnswer } from '../health.js';
import { type Route, callerOf, json, managementCallerOf } from '../route.js';

interface CreateTenantBody {
  name?: string;
  management_key?: string;
  private_key?: string;
}

/** True for 127.0.0.0/8, ::1 and IPv4-mapped loopback. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (isIP(v4) === 4) return v4.startsWith('127.');
  return address === '::1';
}

/** True for a Host (or an origin's host) naming this machine: localhost, 127.0.0.0/8 or [::1], any port. */
export function isLoopbackHost(host: string | undefined): boolean {
  const match = host === undefined ? null : /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+))(?::\d{1,5})?$/.exec(host);
  if (!match) return false;
  const [, v6, name = ''] = match;
  if (v6 !== undefined) return isIP(v6) === 6 && isLoopback(v6.toLowerCase());
  return name.toLowerCase() === 'localhost' || (isIP(name) === 4 && isLoopback(name));
}

/**
 * The admin routes answer this machine's own tools only. A loopback address is not enough: a web
 * page can make the browser call the emulator (a DNS name rebound to 127.0.0.1 carries that name
 * in Host; a page of another site is named by Origin and Sec-Fetch-Site), and a proxy pointed at
 * the emulator calls from loopback too (the hop header marks it).
 */
export function adminGuard(request: IncomingMessage): void {
  if (!isLoopback(request.socket.remoteAddress) || request.headers[PROXY_HOP_HEADER] !== undefined) {
    throw new HttpError(403, 'The emulator admin routes answer loopback callers only (not calls through a proxy).');
  }
  const host = request.headers.host;
  if (!isLoopbackHost(host)) {
    throw new HttpError(
      403,
      `The emulator admin routes answer requests for localhost, 127.0.0.0/8 or [::1] only, not Host ${JSON.stringify(host ?? '')}.`,
    );
  }
  // An absolute request target (`POST http://evil.example/_emulator/tenants`, as a proxy is asked)
  // names its host itself: it is held to the same rule as Host.
  const target = request.url ?? '';
  if (!target.startsWith('/') && !isLoopbackOrigin(target)) {
    throw new HttpError(403, 'The emulator admin routes answer requests for localhost, 127.0.0.0/8 or [::1] only.');
  }
  const origin = request.headers.origin;
  if (origin !== undefined && !isLoopbackOrigin(origin)) {
    throw new HttpError(
      403,
      `The emulator admin routes refuse browser requests from another site (Origin ${JSON.stringify(origin)}).`,
    );
  }
  if (request.headers['sec-fetch-site'] === 'cross-site') {
    throw new HttpError(
      403,
      'The emulator admin routes refuse cross-site browser requests (Sec-Fetch-Site: cross-site).',
    );
  }
}

function isLoopbackOrigin(origin: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    // `null` (a sandboxed frame, a file) and anything unparsable.
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackHost(url.host);
}

/**
 * Routes of the emulator itself, outside the platform API: health (503 while the store cannot
 * write: storeProblem says why) and the loopback-only admin.
 */
export const emulatorRoutes: readonly Route[] = [
  {
    method: 'GET',
    path: '/health',
    summary: 'Whether the emulator serves and its store can write, and its version.',
    public: true,
    responses: {
      200: { description: 'Serving.', schema: healthSchema },
      503: { description: 'The store cannot write (its words in `store.detail`).', schema: healthSchema },
    },
    handler: (_call, { services }) => {
      const { status, body } = healthAnswer(services.storeProblem());
      return { status, json: body };
    },
  },
  {
    /**
     * Creates a tenant with its own management and private Applications and returns their keys, so
     * that tenant isolation can be exercised. Only callers on loopback may use it (adminGuard): a key
     * of another tenant is no protection against a caller who can mint tenants.
     */
    method: 'POST',
    path: '/_emulator/tenants',
    summary: 'Create a tenant with a management and a private Application (loopback only).',
    schema: { body: createTenantSchema },
    public: true,
    admin: true,
    responses: {
      201: { description: 'The tenant and the keys of its two Applications.', schema: createdTenantSchema },
    },
    problems: [409],
    handler: async (call, { services }) => {
      const body = (call.body as CreateTenantBody | null | undefined) ?? {};
      if (body.management_key !== undefined && body.management_key === body.private_key) {
        throw fieldError('management_key and private_key must differ.', {
          private_key: ['must differ from management_key'],
        });
      }
      const tenant: CreatedTenant = await services.tenants.create(body.name ?? 'tenant', {
        ...(body.management_key !== undefined && { managementKey: body.management_key }),
        ...(body.private_key !== undefined && { privateKey: body.private_key }),
      });
      return json(tenant, 201);
    },
  },
  {
    /** The tenants `POST /_emulator/tenants` made, and the bootstrapped one: for `svc tenants list`. */
    method: 'GET',
    path: '/_emulator/tenants',
    summary: "The emulator's tenants: ids, names and creation times, never a key (loopback only).",
    public: true,
    admin: true,
    responses: { 200: { description: 'Every tenant, the bootstrapped one first.', schema: tenantListSchema } },
    handler: (_call, { services }) => json({ data: services.tenants.list() }),
  },
  {
    method: 'GET',
    path: '/_emulator/webhook-secret',
    summary: "The tenant's webhook signing secret, for SVC-SIGNATURE (management keys, loopback only).",
    admin: true,
    responses: { 200: { description: 'The secret.', schema: webhookSecretSchema } },
    handler: async (call, { services }) => {
      const caller = managementCallerOf(call, 'The webhook signing secret is shown to management Applications only.');
      return json({ secret: await services.webhooks.secret(caller.tenantId) });
    },
  },
  {
    method: 'GET',
    path: '/_emulator/quotas',
    summary: "The bytes the caller's tenant keeps against each storage quota, and all tenants against `total`.",
    responses: { 200: { description: 'Used and quota in bytes, by quota.', schema: quotaUsageSchema } },
    handler: (call, { services }) => {
      const caller = managementCallerOf(call, "The tenant's storage is shown to management Applications only.");
      return json(services.quotas.usage(caller.tenantId));
    },
  },
  {
    /**
     * The explained decision of a past request of the caller's tenant by its SVC-TRACE-ID: any of its
     * refusals to a management key, only its own to another Application's key (404 otherwise).
     */
    method: 'GET',
    path: '/_emulator/explanations/:trace_id',
    summary: "Why a past request of the caller's tenant was refused, by its trace id (the last 1,000 per tenant).",
    schema: { params: explanationParamsSchema },
    responses: { 200: { description: 'The stored decision.', schema: storedExplanationSchema } },
    problems: [404],
    handler: (call, { services }) => {
      const caller = callerOf(call);
      const traceId = call.params.trace_id ?? '';
      const stored: StoredExplanation | undefined = services.explanations.get(caller.tenantId, traceId);
      const mine =
        stored !== undefined &&
        (caller.application.type === 'management' || stored.explanation.application?.id === caller.application.id);
      if (!mine)
        throw new HttpError(404, `No explained decision with trace id ${traceId} (unknown, or no longer kept).`);
      return json(stored);
    },
  },
  {
    method: 'POST',
    path: '/_emulator/explain',
    summary:
      "What the tenant's current Applications and tokens would decide for an Application, a permission and a token or container (management keys).",
    schema: { body: explainRequestSchema },
    responses: { 200: { description: 'The decision and its explanation.', schema: explainAnswerSchema } },
    problems: [404],
    handler: (call, { services }) => {
      const caller = managementCallerOf(call, 'Hypothetical access is explained to management Applications only.');
      return json(explainHypothetical(services, caller, call.body as ExplainRequest));
    },
  },
];
