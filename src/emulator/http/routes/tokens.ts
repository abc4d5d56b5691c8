import type { FastifyInstance, FastifyRequest } from 'fastify';
import { JSON_CONTENT_TYPE } from '../../../api/headers.js';
import { createTokenSchema, tokenIdParamsSchema, tokenListQuerySchema } from '../../../api/schemas.js';
import type { CreateTokenBody, TokenListQuery } from '../../../api/types.js';
import { HttpError } from '../../errors.js';
import type { TokenService } from '../../services/tokens.js';
import { tokenContext } from '../auth.js';
import { sendJson } from '../send.js';

type IdParams = { Params: { id: string } };

function requireBody(request: FastifyRequest): unknown {
  if (request.body === undefined) throw new HttpError(400, `Send a JSON body (Content-Type: ${JSON_CONTENT_TYPE}).`);
  return request.body;
}

/**
 * Tokens (not in the spec; what proxies and reactors need). Permissions are checked per token
 * against its containers, so the routes declare none.
 */
export function tokenRoutes(app: FastifyInstance, tokens: TokenService): void {
  app.post<{ Body: CreateTokenBody }>('/tokens', { schema: { body: createTokenSchema } }, async (request, reply) =>
    reply.status(201).send(await tokens.create(tokenContext(request), request.body)),
  );

  app.get<{ Querystring: TokenListQuery }>(
    '/tokens',
    { schema: { querystring: tokenListQuerySchema } },
    async (request) => tokens.list(tokenContext(request), request.query),
  );

  app.get<IdParams>('/tokens/:id', { schema: { params: tokenIdParamsSchema } }, async (request) =>
    tokens.get(tokenContext(request), request.params.id),
  );

  app.delete<IdParams>('/tokens/:id', { schema: { params: tokenIdParamsSchema } }, async (request, reply) => {
    await tokens.delete(tokenContext(request), request.params.id);
    return reply.status(204).send();
  });

  app.post('/tokenize', async (request, reply) =>
    sendJson(reply, await tokens.tokenize(tokenContext(request), requireBody(request)), 201),
  );

  app.post('/detokenize', async (request, reply) =>
    sendJson(reply, tokens.detokenize(tokenContext(request), requireBody(request))),
  );
}
