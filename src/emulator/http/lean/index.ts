import type { IncomingMessage, ServerResponse } from 'node:http';
import { BODY_LIMIT_BYTES } from '../../../api/limits.js';
import type { EmitEvent } from '../../events.js';
import type { ProxyPipeline } from '../../proxy/pipeline.js';
import type { ApplicationService } from '../../services/applications.js';
import type { ReactorService } from '../../services/reactors.js';
import type { TokenContext, TokenService } from '../../services/tokens.js';
import type { JsonBody } from '../body.js';
import { STARTING_RETRY_AFTER, startingError } from '../problems.js';
import { PROXY_BODY_LIMIT } from '../proxy-call.js';
import { mediaTypeOf, readBody } from './body.js';
import { type ErrorAnswer, Exchange } from './exchange.js';
import { leanHandlers, type LeanRoute } from './routes.js';

export interface LeanDeps {
  applications: ApplicationService;
  tokens: TokenService;
  reactors: ReactorService;
  pipeline: ProxyPipeline;
  /** The JSON decoder fastify's routes use (body.ts). */
  json: JsonBody;
  answerError: ErrorAnswer;
  emit: EmitEvent;
  /** Whether the emulator serves yet (503 while it starts, as fastify's hook answers). */
  serving: () => boolean;
  /** Why the store cannot write now, for /health (Services.storeProblem). */
  storeProblem: () => string | undefined;
}

/** An id the lean routes take as it is: what find-my-way would hand over undecoded, well within its length limit. */
const PLAIN_ID = /^[A-Za-z0-9._:-]{1,1024}$/;
const PROXY_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The hot routes on node:http, in front of fastify: `/proxy...`, `POST /reactors/{id}/react`,
 * `GET /tokens/{id}` and `POST /tokens`, and `GET /health` (a start is ready before fastify is loaded). They share fastify's modules (trace ids, auth, the JSON
 * decoder, route schemas, the one error answer, the log line) and answer as fastify would, byte
 * for byte; what they do not take plainly (a percent-encoded path, a chunked or oversized body, a
 * Content-Type fastify would refuse, a missing Host) is left to fastify before anything is read.
 * Returns whether the request was taken.
 */
export function leanRoutes(deps: LeanDeps): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { authenticate, handlers } = leanHandlers(deps);
  return (req, res) => {
    const route = routeOf(req);
    if (route === undefined) return false;
    const proxy = route.name === 'proxy';
    const exchange = new Exchange(req, res, proxy, deps.answerError, deps.emit);
    const handle = handlers[route.name];
    if (!deps.serving()) {
      exchange.header('retry-after', STARTING_RETRY_AFTER);
      exchange.fail(startingError());
      return true;
    }
    // As fastify's hook does: the caller is known (or refused) before the body is read. /proxy
    // authenticates itself; /health is public.
    let ctx: TokenContext | undefined;
    try {
      ctx = proxy || route.name === 'health' ? undefined : authenticate(exchange);
    } catch (error) {
      exchange.fail(error);
      return true;
    }
    if (route.body === 'none') {
      run(exchange, () => handle(exchange, route.id, undefined, ctx));
      return true;
    }
    readBody(req, proxy ? PROXY_BODY_LIMIT : BODY_LIMIT_BYTES, (error, raw) => {
      if (error) return bodyFailed(exchange, error);
      if (route.body === 'bytes') return run(exchange, () => handle(exchange, route.id, raw, ctx));
      deps.json(req, raw!, (failure, value) => {
        if (failure) bodyFailed(exchange, failure);
        else run(exchange, () => handle(exchange, route.id, value, ctx));
      });
    });
    return true;
  };
}

/** What fastify does when a body cannot be read or parsed: the error is answered and the connection closed. */
function bodyFailed(exchange: Exchange, error: Error): void {
  exchange.header('connection', 'close');
  exchange.fail(error);
}

/** Runs a handler: whatever it throws or rejects with is answered. */
function run(exchange: Exchange, handler: () => void | Promise<void>): void {
  try {
    const result = handler();
    if (result) result.catch((error: unknown) => exchange.fail(error));
  } catch (error) {
    exchange.fail(error);
  }
}

interface Match {
  name: LeanRoute;
  id: string;
  /** How the body is taken: not at all, as bytes, or as JSON; absent when there is none to read. */
  body: 'none' | 'bytes' | 'json';
}

/** The lean route a request takes, or undefined to leave it to fastify. */
function routeOf(req: IncomingMessage): Match | undefined {
  const url = req.url ?? '';
  const method = req.method ?? '';
  // Absolute-form targets, fragments and percent-encodings are the router's to read.
  if (url.charCodeAt(0) !== 47 || url.includes('#')) return undefined;
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  if (path.includes('%')) return undefined;
  // Answered by fastify's hook (a problem, not node:http's bare 400); chunked bodies are fastify's to read.
  if ((req.headers.host === undefined && req.httpVersion === '1.1') || req.headers['transfer-encoding'] !== undefined)
    return undefined;
  if (path === '/proxy' || path.startsWith('/proxy/')) {
    if (!PROXY_METHODS.has(method)) return undefined;
    if (method === 'GET') return { name: 'proxy', id: '', body: 'none' };
    // Any type is read as bytes, but one fastify takes for invalid is its 415.
    const type = mediaTypeOf(req.headers['content-type']);
    if (type === false || !(Number(req.headers['content-length'] ?? 0) <= PROXY_BODY_LIMIT)) return undefined;
    return { name: 'proxy', id: '', body: type === undefined && noBody(req) ? 'none' : 'bytes' };
  }
  if (method === 'GET' && path === '/health') return { name: 'health', id: '', body: 'none' };
  if (method === 'GET') {
    const id = path.startsWith('/tokens/') ? path.slice('/tokens/'.length) : '';
    return PLAIN_ID.test(id) ? { name: 'getToken', id, body: 'none' } : undefined;
  }
  if (method !== 'POST') return undefined;
  let name: LeanRoute;
  let id = '';
  if (path === '/tokens') name = 'createToken';
  else if (path.startsWith('/reactors/') && path.endsWith('/react')) {
    name = 'react';
    id = path.slice('/reactors/'.length, -'/react'.length);
    if (!PLAIN_ID.test(id)) return undefined;
  } else return undefined;
  const type = mediaTypeOf(req.headers['content-type']);
  // No body and no type: the route sees none. A JSON body of a declared length within the limit
  // is read here; anything else (another type, no length) is fastify's.
  if (type === undefined) return noBody(req) ? { name, id, body: 'none' } : undefined;
  if (type !== 'application/json' || req.headers['content-length'] === undefined) return undefined;
  return Number(req.headers['content-length']) <= BODY_LIMIT_BYTES ? { name, id, body: 'json' } : undefined;
}

/** As fastify has it: no Content-Length (or 0) and no Transfer-Encoding is no body. */
function noBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
}
