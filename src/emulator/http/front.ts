import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { jsonBody } from './body.js';
import { HttpError } from '../errors.js';
import { DEFAULT_TIMEOUTS, clientErrorHandler, closeGracefully, connectHandler, serverOptions } from './connections.js';
import { Exchange } from './lean/exchange.js';
import { leanRoutes } from './lean/index.js';
import { errorAnswer, isProxyPath } from './problems.js';
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
        storeProblem: services.storeProblem,
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

  /** Answers a request with an error, on neither path (a proxy_error on /proxy). */
  const refuse = (req: IncomingMessage, res: ServerResponse, error: unknown) =>
    new Exchange(req, res, isProxyPath(req.url ?? ''), answerError, emit).fail(error);
  const track = (res: ServerResponse) => {
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
  };

  const server = createServer(http, (req, res) => {
    track(res);
    const malformed = malformedHeaders(req);
    if (malformed) return refuse(req, res, malformed);
    if (lean?.(req, res)) return;
    if (fastify) return fastify(req, res);
    load().then(
      (handler) => handler(req, res),
      // fastify did not load (a bug): still a problem, never a hung request.
      (error: unknown) => refuse(req, res, error),
    );
  });
  // An Expect other than 100-continue: node:http would answer a bare 417.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    track(res);
    // The body the caller holds back (or sends anyway) is not read: the connection ends with the answer.
    res.setHeader('connection', 'close');
    refuse(req, res, expectationError(req));
  });
  server.on('connect', connectHandler(emit, answerError));
  // As fastify sets up the server it makes.
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.requestTimeout = http.requestTimeout;
  server.setTimeout(0);
  server.on('clientError', clientErrorHandler(emit, answerError));

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

/**
 * What no route should see: two Host headers (node:http keeps the first, so a check of Host, the
 * admin guard's, could read another value than a proxy or cache in front read). Refused on every
 * route, a 400.
 */
function malformedHeaders(req: IncomingMessage): HttpError | undefined {
  const raw = req.rawHeaders;
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') hosts++;
  }
  if (hosts > 1) return new HttpError(400, `A request carries one Host header; this one has ${hosts}.`);
  return undefined;
}

function expectationError(req: IncomingMessage): HttpError {
  const given = JSON.stringify(String(req.headers.expect ?? '').slice(0, 100));
  return new HttpError(
    417,
    `Expect ${given} cannot be met: the only expectation answered is 100-continue; send the request without it.`,
  );
}
