import type { IncomingMessage, Server, ServerResponse } from 'node:http';
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
import { DEFAULT_TIMEOUTS, clientErrorHandler, serverOptions, type HttpTimeouts } from './connections.js';
import {
  MAX_PARAM_LENGTH,
  STARTING_RETRY_AFTER,
  errorAnswer,
  notFoundHandler,
  problemHandler,
  startingError,
  toHttpError,
} from './problems.js';
import { applicationRoutes } from './routes/applications.js';
import { adminGuard, emulatorRoutes } from './routes/emulator.js';
import { eventRoutes } from './routes/events.js';
import { proxyInvokeRoutes, proxyRoutes } from './routes/proxies.js';
import { reactorRoutes } from './routes/reactors.js';
import { tokenRoutes } from './routes/tokens.js';
import { transactionRoutes } from './routes/transactions.js';
import { requestEvent, traceIdOf } from './trace.js';
import { schemaCompiler } from '../validation.js';

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
  /**
   * The server fastify answers on, given fastify's handler (front.ts: node:http with the lean
   * routes in front). Without it fastify makes a server of its own.
   */
  attach?: (handler: (req: IncomingMessage, res: ServerResponse) => void) => Server;
}

/** The emulator's HTTP surface: hooks, the one error handler, and every route. */
export function buildServer({
  services,
  pipeline,
  emit,
  eventLog,
  debug = false,
  serving = () => true,
  timeouts: given,
  attach,
}: ServerOptions): FastifyInstance {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...given };
  const http = serverOptions(timeouts);
  const handleProblem = problemHandler(emit, debug);
  const app = Fastify({
    ...(attach && { serverFactory: attach }),
    logger: false,
    bodyLimit: BODY_LIMIT_BYTES,
    requestTimeout: http.requestTimeout,
    http,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // The server given is the front's, which answers client errors itself.
    clientErrorHandler: attach ? () => {} : clientErrorHandler(emit, errorAnswer(emit, debug)),
    // The router's own refusals (a path that is not valid percent-encoding, a parameter too long)
    // are problems like every other answer (a proxy_error on /proxy).
    frameworkErrors: (error, request, reply) => {
      reply.header(TRACE_HEADER, request.id);
      void handleProblem(toHttpError(error, request), request, reply);
    },
    // A trace id given by the caller is echoed when it is a plausible id; otherwise one is made.
    genReqId: (req) => traceIdOf(req.headers[TRACE_HEADER]),
    requestIdHeader: false,
    // A stop lets requests in flight finish (front.ts closeGracefully); one that arrives on an open
    // connection meanwhile is answered too, with Connection: close, rather than a bare 503.
    forceCloseConnections: false,
    return503OnClosing: false,
  });

  app.setValidatorCompiler(schemaCompiler);
  registerBodyParsers(app);
  app.setErrorHandler(handleProblem);
  app.setNotFoundHandler(notFoundHandler(handleProblem));
  app.decorateRequest('caller', undefined);
  app.decorateRequest('tenantId', undefined);
  app.decorateRequest('detokenized', undefined);

  // One onRequest hook (each is a step of every request): echo the trace id, answer 503 while
  // starting, guard the admin routes (before any key is looked at), then authenticate.
  const authenticate = authHook(services.applications);
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(TRACE_HEADER, request.id);
    if (!serving()) {
      reply.header('retry-after', STARTING_RETRY_AFTER);
      done(startingError());
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
    const { method, url, id, tenantId, detokenized } = request;
    emit(requestEvent(method, url, reply.statusCode, reply.elapsedTime, id, tenantId, detokenized));
    done();
  });

  emulatorRoutes(app, services.tenants, services.webhooks, services.storeProblem);
  eventRoutes(app, eventLog, {
    reactor: (id) => services.reactors.ownerOf(id),
    proxy: (id) => services.proxies.ownerOf(id),
  });
  applicationRoutes(app, services.applications);
  tokenRoutes(app, services.tokens);
  transactionRoutes(app, services.transactions);
  reactorRoutes(app, services.reactors);
  proxyRoutes(app, services.proxies);
  proxyInvokeRoutes(app, pipeline);
  return app;
}
