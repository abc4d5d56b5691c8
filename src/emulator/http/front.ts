import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { jsonBody } from './body.js';
import { DEFAULT_TIMEOUTS, clientErrorHandler, closeGracefully, serverOptions } from './connections.js';
import { Exchange } from './lean/exchange.js';
import { leanRoutes } from './lean/index.js';
import { errorAnswer } from './problems.js';
import type { ServerOptions } from './server.js';

/** fastify's default: how long an idle keep-alive connection is kept open. */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;
/** fastify is loaded this long after the emulator serves, unless a request needs it sooner. */
const FASTIFY_PRELOAD_MS = 250;

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface HttpServer {
  readonly server: Server;
  /** Listens on `host:port`; rejects as node:http does (EADDRINUSE, EACCES...). */
  listen(port: number, host: string): Promise<void>;
  /** Closes at once (after a failed listen). */
  close(): Promise<void>;
  /** Stops accepting at once; answers in flight finish within the shutdown grace, then the rest is cut. */
  closeGracefully(): Promise<void>;
  /** The emulator serves: fastify is loaded a moment later, unless a request needed it already. */
  started(): void;
}

/**
 * The emulator's HTTP server: node:http, with the lean routes (lean/) answering the hot paths and
 * /health, and fastify (server.ts) everything else. fastify is most of what a start would load: it
 * is loaded a moment after the emulator serves, or with the first request that needs it (which
 * waits for it), so that a start is ready sooner. Every answer is tracked for a graceful stop.
 */
export function createHttpServer(options: ServerOptions & { lean: boolean }): HttpServer {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const http = serverOptions(timeouts);
  const inFlight = new Set<ServerResponse>();
  const answerError = errorAnswer(options.emit, options.debug ?? false);
  const { services, pipeline, emit, serving = () => true } = options;
  const lean = options.lean
    ? leanRoutes({
        applications: services.applications,
        tokens: services.tokens,
        reactors: services.reactors,
        pipeline,
        json: jsonBody,
        answerError,
        emit,
        serving,
      })
    : undefined;

  let app: FastifyInstance | undefined;
  let fastify: Handler | undefined;
  let loading: Promise<Handler> | undefined;
  const load = () =>
    (loading ??= import('./server.js').then(async ({ buildServer }) => {
      let handler: Handler | undefined;
      // fastify answers on this server (its own listener is never added): the handler is all it gives.
      app = buildServer({ ...options, attach: (given) => ((handler = given), server) });
      await app.ready();
      fastify = handler;
      return handler!;
    }));

  const server = createServer(http, (req, res) => {
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
    if (lean?.(req, res)) return;
    if (fastify) return fastify(req, res);
    load().then(
      (handler) => handler(req, res),
      // fastify did not load (a bug): still a problem, never a hung request.
      (error: unknown) => new Exchange(req, res, false, answerError, emit).fail(error),
    );
  });
  // As fastify sets up the server it makes.
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.requestTimeout = http.requestTimeout;
  server.setTimeout(0);
  server.on('clientError', clientErrorHandler(emit));

  let preload: NodeJS.Timeout | undefined;

  return {
    server,
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen({ port, host }, () => {
          server.off('error', reject);
          resolve();
        });
      }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
    started() {
      preload ??= setTimeout(() => void load().catch(() => {}), FASTIFY_PRELOAD_MS);
      preload.unref();
    },
    async closeGracefully() {
      clearTimeout(preload);
      await closeGracefully(server, inFlight, timeouts.shutdownGraceMs);
      // fastify's own closing (its routes, its hooks); the server is closed already.
      await (loading ?? Promise.resolve()).catch(() => {});
      await app?.close();
    },
  };
}
