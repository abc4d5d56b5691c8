import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import { TRACE_HEADER } from '../../api/headers.js';
import { BODY_LIMIT_BYTES } from '../../api/limits.js';
import { HttpError } from '../errors.js';
import type { EmitEvent } from '../events.js';
import type { ProxyPipeline } from '../proxy/pipeline.js';
import type { Services } from '../services/index.js';
import { authHook } from './auth.js';
import { registerBodyParsers } from './body.js';
import { DEFAULT_TIMEOUTS, clientErrorHandler, closeGracefully, serverOptions, type HttpTimeouts } from './connections.js';
import { leanRoutes } from './lean/index.js';
import { MAX_PARAM_LENGTH, errorAnswer, notFoundHandler, problemHandler, sendProblem, toHttpError } from './problems.js';
import { applicationRoutes } from './routes/applications.js';
import { adminGuard, emulatorRoutes } from './routes/emulator.js';
import { proxyInvokeRoutes, proxyRoutes } from './routes/proxies.js';
import { reactorRoutes } from './routes/reactors.js';
import { tokenRoutes } from './routes/tokens.js';
import { transactionRoutes } from './routes/transactions.js';
import { requestEvent, traceIdOf } from './trace.js';
import { schemaCompiler } from '../validation.js';

/** fastify's default: how long an idle keep-alive connection is kept open. */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

export interface ServerOptions {
  services: Services;
  /** What answers `/proxy...`. */
  pipeline: ProxyPipeline;
  emit: EmitEvent;
  /** Put stack traces of internal errors in responses (`svc serve --debug`). */
  debug?: boolean;
  timeouts?: Partial<HttpTimeouts>;
  /**
   * Serve the hot routes on the lean path in front of fastify (default); tests turn it off to
   * compare its answers with fastify's.
   */
  lean?: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Stops accepting at once; answers in flight finish within the shutdown grace, then the rest is cut. */
    closeGracefully(): Promise<void>;
  }
}

/** The emulator's HTTP surface: hooks, the one error handler, and every route. */
export function buildServer({ services, pipeline, emit, debug = false, timeouts: given, lean = true }: ServerOptions): FastifyInstance {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...given };
  const http = serverOptions(timeouts);
  const inFlight = new Set<ServerResponse>();
  const track = (response: ServerResponse) => {
    inFlight.add(response);
    response.once('close', () => inFlight.delete(response));
  };
  // The lean routes take their requests first; they are given what they share once fastify has it.
  let takeLean: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined;
  const app = Fastify({
    // The server fastify would make (its keep-alive and request timeouts), with the lean routes in front.
    serverFactory: (handler) => {
      const server = createServer(http, (req, res) => {
        if (!takeLean?.(req, res)) handler(req, res);
      });
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      server.requestTimeout = http.requestTimeout;
      server.setTimeout(0);
      return server;
    },
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
    genReqId: (req) => traceIdOf(req.headers[TRACE_HEADER]),
    requestIdHeader: false,
    // A stop lets requests in flight finish (closeGracefully); one that arrives on an open
    // connection meanwhile is answered too, with Connection: close, rather than a bare 503.
    forceCloseConnections: false,
    return503OnClosing: false,
  });

  app.setValidatorCompiler(schemaCompiler);
  const json = registerBodyParsers(app);
  app.setErrorHandler(problemHandler(emit, debug));
  app.setNotFoundHandler(notFoundHandler);
  app.decorateRequest('caller', undefined);
  app.decorateRequest('tenantId', undefined);

  // One onRequest hook (each is a step of every request): note the answer as in flight (a stop
  // waits for it), echo the trace id, guard the admin routes (before any key is looked at), then
  // authenticate.
  const authenticate = authHook(services.applications);
  app.addHook('onRequest', (request, reply, done) => {
    track(reply.raw);
    reply.header(TRACE_HEADER, request.id);
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
    emit(requestEvent(request.method, request.url, reply.statusCode, reply.elapsedTime, request.id, request.tenantId));
    done();
  });

  emulatorRoutes(app, services.tenants, services.webhooks);
  applicationRoutes(app, services.applications);
  tokenRoutes(app, services.tokens);
  transactionRoutes(app, services.transactions);
  reactorRoutes(app, services.reactors);
  proxyRoutes(app, services.proxies);
  proxyInvokeRoutes(app, pipeline);
  if (lean) {
    const { applications, tokens, reactors } = services;
    takeLean = leanRoutes({ applications, tokens, reactors, pipeline, json, answerError: errorAnswer(emit, debug), emit, track });
  }
  app.decorate('closeGracefully', () => closeGracefully(app, inFlight, timeouts.shutdownGraceMs));
  return app;
}
