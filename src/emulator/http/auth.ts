import type { FastifyReply, FastifyRequest } from 'fastify';
import { API_KEY_HEADER, TRANSACTION_HEADER } from '../../api/headers.js';
import { HttpError } from '../errors.js';
import type { ApplicationService, Caller } from '../services/applications.js';
import type { TokenContext } from '../services/tokens.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller; set by the auth hook on every route that is not public. */
    caller: Caller | undefined;
    /** The tenant the request belongs to, for its log line: the caller's, or on /proxy the proxy's. */
    tenantId: string | undefined;
    /** On /proxy: how many tokens were detokenized, for its log line. */
    detokenized: number | undefined;
  }
  interface FastifyContextConfig {
    /** The permission the calling Application needs (spec section 4). */
    permission?: string;
    /** No API key needed (health, emulator admin, proxy invocation which authenticates itself). */
    public?: boolean;
    /** A proxy invocation: errors are answered as `{"proxy_error": problem}`. */
    proxy?: boolean;
    /** An emulator admin route: loopback callers only, and no browser on another site (see adminGuard). */
    admin?: boolean;
  }
}

/** Resolves `SVC-API-KEY` to an Application (401 when missing or unknown) and checks the route's permission (403). */
export function authHook(applications: ApplicationService) {
  return (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
    try {
      authenticate(applications, request);
      done();
    } catch (error) {
      done(error as Error);
    }
  };
}

function authenticate(applications: ApplicationService, request: FastifyRequest): void {
  const config = request.routeOptions.config;
  if (request.is404 || config.public) return;
  const caller = callerByKey(applications, request.headers[API_KEY_HEADER]);
  request.caller = caller;
  request.tenantId = caller.tenantId;
  requirePermission(caller, config.permission);
}

/**
 * The caller an `SVC-API-KEY` value names (401 when missing or unknown). Both HTTP paths
 * authenticate here: fastify's hook and the lean routes.
 */
export function callerByKey(applications: ApplicationService, key: string | string[] | undefined): Caller {
  if (typeof key !== 'string' || key === '') {
    throw new HttpError(401, `Send the API key of an Application in the ${API_KEY_HEADER.toUpperCase()} header.`);
  }
  const application = applications.authenticate(key);
  if (!application)
    throw new HttpError(
      401,
      `The API key in ${API_KEY_HEADER.toUpperCase()} is not valid (unknown, regenerated or expired).`,
    );
  return { tenantId: application.tenant_id, application };
}

/** A 403 unless the caller holds the permission a route needs (none: any caller). */
export function requirePermission(caller: Caller, permission: string | undefined): void {
  const { application } = caller;
  if (permission && !application.permissions.includes(permission)) {
    throw new HttpError(403, `This ${application.type} Application lacks the ${permission} permission.`);
  }
}

/** The caller of a route behind the auth hook. */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new Error(`route ${request.routeOptions.url} has no auth`);
  return request.caller;
}

/** The caller, and the transaction its `SVC-TRANSACTION-ID` header names. */
export function tokenContext(request: FastifyRequest): TokenContext {
  return tokenContextOf(callerOf(request), request.headers[TRANSACTION_HEADER]);
}

/** The token context of a caller and the value of its `SVC-TRANSACTION-ID` header (both HTTP paths). */
export function tokenContextOf(caller: Caller, transaction: string | string[] | undefined): TokenContext {
  return { caller, transactionId: typeof transaction === 'string' && transaction !== '' ? transaction : undefined };
}
