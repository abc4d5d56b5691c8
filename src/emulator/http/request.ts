import type { IncomingMessage, ServerResponse } from 'node:http';
import { API_KEY_HEADER } from '../../api/headers.js';
import { BODY_LIMIT_BYTES } from '../../api/limits.js';
import { HttpError } from '../errors.js';
import type { EmitEvent } from '../events.js';
import { callerByKey, requirePermission } from '../services/applications.js';
import { type RouteValidator, routeValidator } from '../validation.js';
import { bodyKind, jsonBody, mergePatchRefused } from './body.js';
import { Exchange } from './exchange.js';
import { type ErrorAnswer, STARTING_RETRY_AFTER, isProxyPath, pathOf, startingError } from './problems.js';
import { PROXY_BODY_LIMIT } from './proxy-call.js';
import { readBody } from './read-body.js';
import type { Route, RouteDeps } from './route.js';
import { createRouter } from './router.js';
import { adminGuard } from './routes/emulator.js';

export interface RequestDeps extends RouteDeps {
  emit: EmitEvent;
  answerError: ErrorAnswer;
  /** Whether the emulator serves yet (503 while it starts). */
  serving: () => boolean;
  /** Whether the server is stopping: every answer then closes its connection. */
  closing: () => boolean;
}

type Part = 'params' | 'body' | 'querystring';
const PARTS: readonly Part[] = ['params', 'body', 'querystring'];

/**
 * The one path of every request: the route found (router.ts), the trace id echoed, 503 while the
 * emulator starts, a Host required of HTTP/1.1, the admin guard (before any key is read), the
 * caller authenticated and its permission checked, the body read and parsed by its type, the
 * route's schemas checked (params, body, query string), then its handler. Anything thrown on the
 * way is answered by the one error answer; the log line is written with the answer (Exchange).
 */
export function requestHandler(routes: readonly Route[], deps: RequestDeps) {
  const find = createRouter(routes);
  // Compiled on first use (validation.ts), one per schema and part.
  const validators = { params: new Map(), body: new Map(), querystring: new Map() } as Record<
    Part,
    Map<object, RouteValidator>
  >;
  const validatorOf = (schema: object, part: Part) => {
    let validator = validators[part].get(schema);
    if (validator === undefined) validators[part].set(schema, (validator = routeValidator(schema, part)));
    return validator;
  };
  const { answerError, emit } = deps;

  return (req: IncomingMessage, res: ServerResponse): void => {
    const url = req.url ?? '/';
    const found = find(req.method ?? '', url);
    const route = found.route;
    const exchange = new Exchange(req, res, route?.proxy === true || isProxyPath(url), answerError, emit);
    if (found.route === undefined && found.refused !== undefined) {
      // A target the router cannot read is refused before anything else is looked at.
      exchange.fail(
        Object.assign(new Error(found.refused), {
          code: found.refused === 'bad-url' ? 'FST_ERR_BAD_URL' : 'FST_ERR_MAX_PARAM_LENGTH',
        }),
      );
      return;
    }
    if (deps.closing()) exchange.header('connection', 'close');
    try {
      admit(exchange, route, deps);
    } catch (error) {
      exchange.fail(error);
      return;
    }
    if (found.route !== undefined) {
      exchange.params = found.params;
      exchange.query = found.query;
    }
    readRequestBody(exchange, route, (error) => {
      if (error) return exchange.fail(error);
      if (route === undefined)
        return exchange.fail(new HttpError(404, `No route ${exchange.method} ${pathOf(exchange.url)}.`));
      run(exchange, route, deps, validatorOf);
    });
  };
}

/** What is checked before a body is read: serving, Host, the admin guard, the caller and its permission. */
function admit(exchange: Exchange, route: Route | undefined, deps: RequestDeps): void {
  const { req } = exchange;
  if (!deps.serving()) {
    exchange.header('retry-after', STARTING_RETRY_AFTER);
    throw startingError();
  }
  if (req.headers.host === undefined && req.httpVersion === '1.1')
    throw new HttpError(400, 'An HTTP/1.1 request needs a Host header.');
  if (route === undefined || route.public) {
    if (route?.admin) adminGuard(req);
    return;
  }
  if (route.admin) adminGuard(req);
  const caller = callerByKey(deps.services.applications, exchange.headers[API_KEY_HEADER]);
  exchange.caller = caller;
  exchange.tenantId = caller.tenantId;
  requirePermission(caller, route.permission);
}

/**
 * Reads the body as the route takes it (see bodyKind). An error reading or parsing it closes the
 * connection with the answer (the client may still be sending). On a path no route takes, a JSON
 * body is still read and parsed (its errors answered), any other type left unread for the 404.
 */
function readRequestBody(exchange: Exchange, route: Route | undefined, done: (error?: unknown) => void): void {
  const { req } = exchange;
  const kind = bodyKind(exchange.method, req.headers, route?.proxy === true);
  if (kind === 'none' || (kind === 'unsupported' && route === undefined)) return done();
  // A route that takes no body (regenerate, POST /transactions, commit, DELETE) takes an empty one
  // whatever its Content-Type, as clients send it (an SDK's POST with no data still names a type).
  const bodyless = route !== undefined && exchange.method !== 'PATCH' && takesNoBody(route);
  if (bodyless && declaredEmpty(req.headers)) return done();
  const refused = () =>
    done(Object.assign(new Error('unsupported media type'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' }));
  if ((kind === 'unsupported' || kind === 'invalid') && !bodyless) return refused();
  const failed = (error: Error) => {
    exchange.header('connection', 'close');
    done(error);
  };
  readBody(req, kind === 'bytes' ? PROXY_BODY_LIMIT : BODY_LIMIT_BYTES, (error, raw) => {
    if (error) return failed(error);
    if (bodyless && raw!.length === 0) return done();
    if (kind === 'unsupported' || kind === 'invalid') return refused();
    if (kind === 'bytes') {
      exchange.body = raw;
      return done();
    }
    if (kind === 'merge-patch' && exchange.method !== 'PATCH') return failed(mergePatchRefused(exchange.method));
    jsonBody(req, raw!, (failure, value) => {
      if (failure) return failed(failure);
      exchange.body = value;
      done();
    });
  });
}

/** A route that reads no body: no schema or description of one, not a proxy call (a PATCH reads its merge patch). */
function takesNoBody(route: Route): boolean {
  return route.proxy !== true && route.schema?.body === undefined && route.jsonBody === undefined;
}

/** A request that says its body is empty: `Content-Length: 0`, or neither a length nor chunks. */
function declaredEmpty(headers: IncomingMessage['headers']): boolean {
  const length = headers['content-length'];
  return length === '0' || (length === undefined && headers['transfer-encoding'] === undefined);
}

/** Checks the route's schemas (params, body, query string; a failure names its part), then runs its handler. */
function run(
  exchange: Exchange,
  route: Route,
  deps: RouteDeps,
  validatorOf: (schema: object, part: Part) => RouteValidator,
): void {
  try {
    for (const part of PARTS) {
      const schema = route.schema?.[part];
      if (schema !== undefined) check(exchange, validatorOf(schema, part), part);
    }
    const answer = route.handler(exchange, deps);
    if (answer instanceof Promise)
      // An answer that cannot be written is failed too, never an unhandled rejection.
      answer
        .then((given) => given && send(exchange, given.status, given.json))
        .catch((error: unknown) => exchange.fail(error));
    else if (answer) send(exchange, answer.status, answer.json);
  } catch (error) {
    exchange.fail(error);
  }
}

function send(exchange: Exchange, status: number, json: string | undefined): void {
  if (json === undefined) exchange.send(status, undefined);
  else exchange.json(status, json);
}

/**
 * What a route part's schema says of its value: ajv is given the object holding it (so that a
 * root value can be coerced and defaults set); a failure is thrown with its errors and part, for
 * the one error answer to word (problems.ts).
 */
function check(exchange: Exchange, validate: RouteValidator, part: Part): void {
  const holder = exchange as unknown as Record<string, unknown>;
  const key = part === 'querystring' ? 'query' : part;
  if (!validate(holder[key] ?? null, { parentData: holder, parentDataProperty: key })) {
    throw Object.assign(new Error(`${part} is not valid`), {
      statusCode: 400,
      validation: validate.errors ?? [],
      validationContext: part,
    });
  }
}
