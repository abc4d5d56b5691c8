import { TRANSACTION_HEADER } from '../../api/headers.js';
import { HttpError } from '../errors.js';
import type { TenantEventLog } from '../event-log.js';
import type { ProxyPipeline } from '../proxy/pipeline.js';
import type { CallReplays } from '../replay/index.js';
import { type Caller, tokenContextOf } from '../services/applications.js';
import type { Services } from '../services/index.js';
import type { TokenContext } from '../services/tokens.js';
import type { Exchange } from './exchange.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a route's handler reaches: the services, the proxy pipeline and the event log. */
export interface RouteDeps {
  services: Services;
  pipeline: ProxyPipeline;
  eventLog: TenantEventLog;
  /** svc replay's kept calls (none in a server made without them). */
  replays?: CallReplays;
}

/** A route's answer: its status and JSON body (absent: no body), or undefined when the route wrote it itself. */
export interface RouteAnswer {
  status: number;
  /** The JSON text of the body; absent for an empty answer. */
  json?: string;
}

/**
 * One route of the HTTP surface, as data the server reads (router.ts, request.ts) and an OpenAPI
 * document can be made from. A GET route answers HEAD too (the headers only), unless it is a proxy
 * call's.
 */
export interface Route {
  method: Method | readonly Method[];
  /** `/applications/:id`; `*` as the last segment takes the rest of the path. */
  path: string;
  /** One line: what the route does. */
  summary: string;
  /** JSON Schemas of the parts, checked in this order: params, body, querystring. */
  schema?: { params?: object; body?: object; querystring?: object };
  /** The permission the calling Application needs (spec section 4). */
  permission?: string;
  /** No API key needed (health, the admin route that makes tenants, proxy invocation which authenticates itself). */
  public?: true;
  /** An emulator admin route: loopback callers only, and no browser on another site (routes/emulator.ts adminGuard). */
  admin?: true;
  /** A proxy invocation: any body taken as bytes, errors answered as `{"proxy_error": problem}`. */
  proxy?: true;
  /**
   * What it answers when it succeeds, by status (the OpenAPI document's; problems are added by
   * openapi.ts); `default`: what user code or a destination may answer, any status.
   */
  responses?: Readonly<{ [status: number]: RouteResponse; default?: RouteResponse }>;
  /** Problem statuses it answers beyond those every route of its kind may (409 conflict, 422 user code). */
  problems?: readonly number[];
  /** A JSON body that no schema constrains (tokenize, detokenize): what it holds. */
  jsonBody?: string;
  handler: (call: Exchange, deps: RouteDeps) => RouteAnswer | undefined | Promise<RouteAnswer | undefined>;
}

/** One success answer of a route, for the OpenAPI document: no schema, no body. */
export interface RouteResponse {
  description: string;
  schema?: object;
  /** Default application/json. */
  contentType?: string;
}

/** A JSON answer of any value (undefined as null). */
export function json(value: unknown, status = 200): RouteAnswer {
  return { status, json: JSON.stringify(value ?? null) };
}

/** An answer with no body. */
export function empty(status: number): RouteAnswer {
  return { status };
}

/** The caller of a route that is not public (request.ts authenticated it). */
export function callerOf(call: Exchange): Caller {
  if (!call.caller) throw new Error(`route ${call.method} ${call.url} has no auth`);
  return call.caller;
}

/** The caller when its key is a management Application's; else a 403 whose detail is `refusal`. */
export function managementCallerOf(call: Exchange, refusal: string): Caller {
  const caller = callerOf(call);
  if (caller.application.type !== 'management') throw new HttpError(403, refusal);
  return caller;
}

/** The caller, and the transaction its `SVC-TRANSACTION-ID` header names. */
export function tokenContext(call: Exchange): TokenContext {
  return tokenContextOf(callerOf(call), call.headers[TRANSACTION_HEADER]);
}
