import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { HttpError } from '../errors.js';
import type { TenantEventLog } from '../event-log.js';
import type { EmitEvent } from '../events.js';
import type { ProxyPipeline } from '../proxy/pipeline.js';
import type { CallReplays } from '../replay/index.js';
import type { Services } from '../services/index.js';
import {
  DEFAULT_TIMEOUTS,
  type HttpTimeouts,
  clientErrorHandler,
  closeGracefully,
  connectHandler,
  serverOptions,
} from './connections.js';
import { Exchange } from './exchange.js';
import { errorAnswer, isProxyPath } from './problems.js';
import { requestHandler } from './request.js';
import { routes } from './routes/index.js';

/** How long an idle keep-alive connection is kept open (72 s, as before). */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

export interface ServerOptions {
  services: Services;
  /** What answers `/proxy...`. */
  pipeline: ProxyPipeline;
  /** svc replay's kept calls (POST /_emulator/replay/{trace_id}). */
  replays?: CallReplays;
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

export interface HttpServer {
  readonly server: Server;
  /** Listens on `host:port`; rejects as node:http does (EADDRINUSE, EACCES...). */
  listen(port: number, host: string): Promise<void>;
  /** Closes at once (after a failed listen). */
  close(): Promise<void>;
  /** Stops accepting at once; answers in flight finish within the shutdown grace, then the rest is cut. */
  closeGracefully(): Promise<void>;
}

/**
 * The emulator's HTTP server: node:http, every route answered by the one request path
 * (request.ts) from the declarations in routes/. Every answer is tracked for a graceful stop.
 */
export function createHttpServer(options: ServerOptions): HttpServer {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const http = serverOptions(timeouts);
  const inFlight = new Set<ServerResponse>();
  const answerError = errorAnswer(options.emit, options.debug ?? false, options.services.explanations);
  const { services, pipeline, replays, emit, eventLog, serving = () => true } = options;
  let closing = false;
  const handle = requestHandler(routes, {
    services,
    pipeline,
    ...(replays && { replays }),
    eventLog,
    emit,
    answerError,
    serving,
    closing: () => closing,
  });

  /** Answers a request with an error before any route is looked for (a proxy_error on /proxy). */
  const refuse = (req: IncomingMessage, res: ServerResponse, error: unknown) =>
    new Exchange(req, res, isProxyPath(req.url ?? ''), answerError, emit).fail(error);
  const track = (res: ServerResponse) => {
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
  };

  // Connections whose last answer is given (see clientErrorHandler).
  const lastAnswered = new WeakSet<Socket>();
  const server = createServer(http, (req, res) => {
    track(res);
    const malformed = malformedHeaders(req);
    if (malformed) {
      // The parser may refuse the rest (a bad Transfer-Encoding): this answer is the connection's last.
      res.setHeader('connection', 'close');
      lastAnswered.add(req.socket);
      return refuse(req, res, malformed);
    }
    handle(req, res);
  });
  // An Expect other than 100-continue: node:http would answer a bare 417.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    track(res);
    // The body the caller holds back (or sends anyway) is not read: the connection ends with the answer.
    res.setHeader('connection', 'close');
    refuse(req, res, expectationError(req));
  });
  server.on('connect', connectHandler(emit, answerError));
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.requestTimeout = http.requestTimeout;
  server.setTimeout(0);
  server.on('clientError', clientErrorHandler(emit, answerError, lastAnswered));

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
    closeGracefully() {
      // A request that arrives on an open connection meanwhile is answered too, with Connection: close.
      closing = true;
      return closeGracefully(server, inFlight, timeouts.shutdownGraceMs);
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
  return transferEncodingError(req.headers['transfer-encoding']);
}

/**
 * A Transfer-Encoding other than chunked (svc reads no other coding): node:http hands the request over, then its
 * parser refuses the body, which would be a second answer on the connection. One 400 instead, and
 * the connection closed (where the next request would begin is unknown).
 */
function transferEncodingError(value: string | undefined): HttpError | undefined {
  if (value === undefined) return undefined;
  if (value.trim().toLowerCase() === 'chunked') return undefined;
  const given = JSON.stringify(value.slice(0, 100));
  return new HttpError(
    400,
    `Transfer-Encoding ${given} is not read here: send the body with Content-Length or Transfer-Encoding: chunked.`,
  );
}

function expectationError(req: IncomingMessage): HttpError {
  const given = JSON.stringify(String(req.headers.expect ?? '').slice(0, 100));
  return new HttpError(
    417,
    `Expect ${given} cannot be met: the only expectation answered is 100-continue; send the request without it.`,
  );
}
