import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import { TRACE_HEADER } from '../../api/headers.js';
import { BODY_LIMIT_BYTES } from '../../api/limits.js';
import { HttpError } from '../errors.js';
import type { TenantEventLog } from '../event-log.js';
import type { EmitEvent } from '../events.js';
import type { ProxyPipeline } from '../proxy/pipeline.js';
import type { Services } from '../services/index.js';
import { authHook } from './auth.js';
import { registerBodyParsers } from './body.js';
import { DEFAULT_TIMEOUTS, clientErrorHandler, closeGracefully, serverOptions, type HttpTimeouts } from './connections.js';
import { MAX_PARAM_LENGTH, notFoundHandler, problemHandler, sendProblem, toHttpError } from './problems.js';
import { applicationRoutes } from './routes/applications.js';
import { adminGuard, emulatorRoutes } from './routes/emulator.js';
import { eventRoutes } from './routes/events.js';
import { proxyInvokeRoutes, proxyRoutes } from './routes/proxies.js';
import { reactorRoutes } from './routes/reactors.js';
import { tokenRoutes } from './routes/tokens.js';
import { transactionRoutes } from './routes/transactions.js';
import { schemaCompiler } from '../validation.js';

const TRACE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface ServerOptions {
  services: Services;
  /** What answers `/proxy...`. */
  pipeline: ProxyPipeline;
  emit: EmitEvent;
  /** Each tenant's recent and live events, for `GET /_emulator/events`. */
  eventLog: TenantEventLog;
  /** Put stack traces of internal errors in responses (`svc serve --debug`). */
  debug?: boolean;
  /**
   * Whether requests are served yet: the emulator listens before it bootstraps (so that a port in
   * use fails before anything is written), and answers 503 until then. Default: always.
   */
  serving?: () => boolean;
  timeouts?: Partial<HttpTimeouts>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Stops accepting at once; answers in flight finish within the shutdown grace, then the rest is cut. */
    closeGracefully(): Promise<void>;
  }
}

/** The emulator's HTTP surface: hooks, the one error handler, and every route. */
export function buildServer({ services, pipeline, emit, eventLog, debug = false, serving = () => true, timeouts: given }: ServerOptions): FastifyInstance {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...given };
  const http = serverOptions(timeouts);
  const app = Fastify({
    logger: false,
    bodyLimit: BODY_LIMIT_BYTES,
    requestTimeout: http.requestTimeout,
    http,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    clientErrorHandler: clientErrorHandler(emit),
    // The router's own refusals (a path that is not valid percent-encoding, a parameter too long)
    // are problems like every other answer.
    frameworkErrors: (error, request, reply) => {
      reply.header(TRACE_HEADER, request.id);
      void sendProblem(reply, toHttpError(error, request), request.id);
    },
    // A trace id given by the caller is echoed when it is a plausible id; otherwise one is made.
    genReqId: (req) => {
      const given = req.headers[TRACE_HEADER];
      return typeof given === 'string' && TRACE_ID.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    // A stop lets requests in flight finish (closeGracefully); one that arrives on an open
    // connection meanwhile is answered too, with Connection: close, rather than a bare 503.
    forceCloseConnections: false,
    return503OnClosing: false,
  });

  app.setValidatorCompiler(schemaCompiler);
  registerBodyParsers(app);
  app.setErrorHandler(problemHandler(emit, debug));
  app.setNotFoundHandler(notFoundHandler);
  app.decorateRequest('caller', undefined);
  app.decorateRequest('tenantId', undefined);

  // One onRequest hook (each is a step of every request): note the answer as in flight (a stop
  // waits for it), echo the trace id, answer 503 while starting, guard the admin routes (before any key is
  // looked at), then authenticate.
  const inFlight = new Set<ServerResponse>();
  const authenticate = authHook(services.applications);
  app.addHook('onRequest', (request, reply, done) => {
    const response = reply.raw;
    inFlight.add(response);
    response.once('close', () => inFlight.delete(response));
    reply.header(TRACE_HEADER, request.id);
    if (!serving()) {
      reply.header('retry-after', '1');
      done(new HttpError(503, 'The emulator is starting; try again in a moment.', { title: 'Starting' }));
      return;
    }
    if (request.raw.headers.host === undefined && request.raw.httpVersion === '1.1') {
      done(new HttpError(400, 'An HTTP/1.1 request needs a Host header.'));
      return;
    }
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
      tenantId: request.tenantId,
    });
    done();
  });

  emulatorRoutes(app, services.tenants, services.webhooks);
  eventRoutes(app, eventLog, { reactor: (id) => services.reactors.ownerOf(id), proxy: (id) => services.proxies.ownerOf(id) });
  applicationRoutes(app, services.applications);
  tokenRoutes(app, services.tokens);
  transactionRoutes(app, services.transactions);
  reactorRoutes(app, services.reactors);
  proxyRoutes(app, services.proxies);
  proxyInvokeRoutes(app, pipeline);
  app.decorate('closeGracefully', () => closeGracefully(app, inFlight, timeouts.shutdownGraceMs));
  return app;
}
