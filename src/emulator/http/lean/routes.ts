import type { Readable } from 'node:stream';
import { API_KEY_HEADER, TRANSACTION_HEADER } from '../../../api/headers.js';
import { createTokenSchema, idParamsSchema, invokeReactorSchema, tokenIdParamsSchema } from '../../../api/schemas.js';
import type { CreateTokenBody, InvokeReactorBody } from '../../../api/types.js';
import type { TokenContext } from '../../services/tokens.js';
import { type RouteValidator, routeValidator } from '../../validation.js';
import { callerByKey, tokenContextOf } from '../auth.js';
import { healthAnswer } from '../health.js';
import { proxyCallOf } from '../proxy-call.js';
import { TEXT_CONTENT_TYPE } from '../send.js';
import type { Exchange } from './exchange.js';
import type { LeanDeps } from './index.js';

export type LeanRoute = 'proxy' | 'getToken' | 'createToken' | 'react' | 'health';
/** A route's work once its caller is known (undefined on /proxy, which authenticates itself). */
type Handler = (exchange: Exchange, id: string, body: unknown, ctx: TokenContext | undefined) => void | Promise<void>;

/**
 * What a route part's schema says of a value, as fastify checks it: a failure is thrown as fastify
 * reports one (its `validation` errors and their part), for the one error answer to word.
 */
function check(validate: RouteValidator, part: 'params' | 'body', holder: Record<string, unknown>): void {
  // fastify hands the validator null for an absent value, and the object holding it.
  if (!validate(holder[part] ?? null, { parentData: holder, parentDataProperty: part })) {
    throw Object.assign(new Error(`${part} is not valid`), {
      statusCode: 400,
      validation: validate.errors ?? [],
      validationContext: part,
    });
  }
}

/**
 * The lean routes' handlers, each doing what its fastify route does (routes/tokens.ts,
 * routes/reactors.ts, routes/proxies.ts) after the auth hook: the same service call, the same
 * checks in the same order (params, then body), the same answer.
 */
export function leanHandlers(deps: LeanDeps): {
  authenticate: (exchange: Exchange) => TokenContext;
  handlers: Record<LeanRoute, Handler>;
} {
  const tokenId = routeValidator(tokenIdParamsSchema, 'params');
  const reactorId = routeValidator(idParamsSchema, 'params');
  const createToken = routeValidator(createTokenSchema, 'body');
  const invoke = routeValidator(invokeReactorSchema, 'body');
  // The auth hook's work, before any body is read, on routes that are not public and declare no permission.
  const authenticate = (exchange: Exchange) => {
    const caller = callerByKey(deps.applications, exchange.headers[API_KEY_HEADER]);
    exchange.tenantId = caller.tenantId;
    return tokenContextOf(caller, exchange.headers[TRANSACTION_HEADER]);
  };

  const handlers: Record<LeanRoute, Handler> = {
    // routes/emulator.ts
    health(exchange) {
      const { status, body } = healthAnswer(deps.storeProblem());
      exchange.json(status, body);
    },

    getToken(exchange, id, _body, ctx) {
      check(tokenId, 'params', { params: { id } });
      exchange.json(200, JSON.stringify(deps.tokens.get(ctx!, id)));
    },

    async createToken(exchange, _id, body, ctx) {
      const request: Record<string, unknown> = { body };
      check(createToken, 'body', request);
      exchange.json(201, JSON.stringify(await deps.tokens.create(ctx!, request.body as CreateTokenBody)));
    },

    async react(exchange, id, body, ctx) {
      const request: Record<string, unknown> = { params: { id }, body };
      check(reactorId, 'params', request);
      check(invoke, 'body', request);
      const answer = await deps.reactors.invoke(
        ctx!,
        id,
        (request.body as InvokeReactorBody | null) ?? {},
        exchange.id,
      );
      exchange.json(answer.status, JSON.stringify(answer.body ?? null));
    },

    async proxy(exchange, _id, body) {
      const { req } = exchange;
      const request = {
        method: exchange.method,
        url: exchange.url,
        headers: exchange.headers,
        rawHeaders: req.rawHeaders,
        traceId: exchange.id,
      };
      const call = proxyCallOf(request, body, {
        onTenant: (tenantId) => {
          exchange.tenantId = tenantId;
        },
        onDetokenized: (count) => {
          exchange.detokenized = count;
        },
      });
      const answer = await deps.pipeline.invoke(call);
      for (const [name, value] of Object.entries(answer.headers)) exchange.header(name, value);
      if (answer.body === undefined || typeof answer.body === 'string') {
        // As text, sent as bytes (send.ts sendText).
        if (!Object.keys(answer.headers).some((name) => name.toLowerCase() === 'content-type'))
          exchange.header('content-type', TEXT_CONTENT_TYPE);
        exchange.send(answer.status, Buffer.from(answer.body ?? ''));
        return;
      }
      exchange.send(answer.status, answer.body as Buffer | Readable);
    },
  };
  return { authenticate, handlers };
}
