import { isIP } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { PROXY_HOP_HEADER } from '../../../api/headers.js';
import { createTenantSchema } from '../../../api/schemas.js';
import type { CreatedTenant } from '../../../api/types.js';
import { HttpError, fieldError } from '../../errors.js';
import type { TenantService } from '../../services/tenants.js';
import type { WebhookService } from '../../services/webhooks.js';
import { callerOf } from '../auth.js';
import { healthAnswer } from '../health.js';

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
export function adminGuard(request: FastifyRequest): void {
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
  const target = request.raw.url ?? '';
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
 * write: `storeProblem` says why) and the loopback-only admin.
 */
export function emulatorRoutes(
  app: FastifyInstance,
  tenants: TenantService,
  webhooks: WebhookService,
  storeProblem: () => string | undefined,
): void {
  app.get('/health', { config: { public: true } }, async (_request, reply) => {
    const { status, body } = healthAnswer(storeProblem());
    return reply.status(status).type('application/json; charset=utf-8').send(body);
  });

  /**
   * `POST /_emulator/tenants` creates a tenant with its own management and private Applications
   * and returns their keys, so that tenant isolation can be exercised. Only callers on loopback
   * may use it (adminGuard): a key of another tenant is no protection against a caller who can mint tenants.
   */
  app.post<{ Body: CreateTenantBody | null }>(
    '/_emulator/tenants',
    { schema: { body: createTenantSchema }, config: { public: true, admin: true } },
    async (request, reply): Promise<CreatedTenant> => {
      const body = request.body ?? {};
      if (body.management_key !== undefined && body.management_key === body.private_key) {
        throw fieldError('management_key and private_key must differ.', {
          private_key: ['must differ from management_key'],
        });
      }
      const tenant = await tenants.create(body.name ?? 'tenant', {
        ...(body.management_key !== undefined && { managementKey: body.management_key }),
        ...(body.private_key !== undefined && { privateKey: body.private_key }),
      });
      reply.status(201);
      return tenant;
    },
  );

  /** The tenant's webhook signing secret (for verifying SVC-SIGNATURE); management keys only. */
  app.get('/_emulator/webhook-secret', { config: { admin: true } }, async (request) => {
    const caller = callerOf(request);
    if (caller.application.type !== 'management') {
      throw new HttpError(403, 'The webhook signing secret is shown to management Applications only.');
    }
    return { secret: await webhooks.secret(caller.tenantId) };
  });
}
