import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import type { EmitEvent } from '../events.js';
import type { Services } from '../services/index.js';
import { authHook } from './auth.js';
import { BODY_LIMIT_BYTES, notFoundHandler, problemHandler } from './problems.js';
import { applicationRoutes } from './routes/applications.js';
import { adminGuard, emulatorRoutes } from './routes/emulator.js';
import { proxyInvokeRoutes, proxyRoutes } from './routes/proxies.js';
import { reactorRoutes } from './routes/reactors.js';
import { tokenRoutes } from './routes/tokens.js';
import { transactionRoutes } from './routes/transactions.js';
import { MERGE_PATCH_CONTENT_TYPE } from '../services/merge-patch.js';
import { schemaCompiler } from '../validation.js';

export const TRACE_HEADER = 'svc-trace-id';
const TRACE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface ServerOptions {
  services: Services;
  emit: EmitEvent;
  /** Put stack traces of internal errors in responses (`svc serve --debug`). */
  debug?: boolean;
}

/** The emulator's HTTP surface: hooks, the one error handler, and every route. */
export function buildServer({ services, emit, debug = false }: ServerOptions): FastifyInstance {
  const app = Fastify({
    logger: false,
    bodyLimit: BODY_LIMIT_BYTES,
    // A trace id given by the caller is echoed when it is a plausible id; otherwise one is made.
    genReqId: (req) => {
      const given = req.headers[TRACE_HEADER];
      return typeof given === 'string' && TRACE_ID.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    forceCloseConnections: true,
    return503OnClosing: true,
  });

  app.setValidatorCompiler(schemaCompiler);
  // Merge patches are JSON too (parsed with the same prototype-poisoning guards); PATCH routes
  // refuse every other type with a 415 of their own.
  app.addContentTypeParser(MERGE_PATCH_CONTENT_TYPE, { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'));
  app.setErrorHandler(problemHandler(emit, debug));
  app.setNotFoundHandler(notFoundHandler);
  app.decorateRequest('caller', undefined);

  // One onRequest hook (each is a step of every request): echo the trace id, guard the admin
  // routes (before any key is looked at), then authenticate.
  const authenticate = authHook(services.applications);
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(TRACE_HEADER, request.id);
    if (request.routeOptions.config.admin) {
      try {
        adminGuard(request);
      } catch (error) {
        done(error as Error);
        return;
      }
    }
    authenticate(request, reply, done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    emit({
      type: 'request',
      method: request.method,
      // The path only: a query string may carry a proxy key.
      path: request.url.split('?')[0] ?? request.url,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
      traceId: request.id,
    });
    done();
  });

  emulatorRoutes(app, services.tenants, services.webhooks);
  applicationRoutes(app, services.applications);
  tokenRoutes(app, services.tokens);
  transactionRoutes(app, services.transactions);
  reactorRoutes(app, services.reactors);
  proxyRoutes(app, services.proxies);
  proxyInvokeRoutes(app, services.proxyPipeline);
  return app;
}
