import { pageSchema, tokenAnswerSchema } from '../../../api/answer-schemas.js';
import { JSON_CONTENT_TYPE } from '../../../api/headers.js';
import { createTokenSchema, tokenIdParamsSchema, tokenListQuerySchema } from '../../../api/schemas.js';
import type { CreateTokenBody, TokenListQuery } from '../../../api/types.js';
import { HttpError } from '../../errors.js';
import type { Exchange } from '../exchange.js';
import { type Route, empty, json, tokenContext } from '../route.js';

const params = tokenIdParamsSchema;
/** What a request naming a transaction (SVC-TRANSACTION-ID) may meet: none by that id (404), or not open (409). */
const TRANSACTIONAL = [404, 409];

function requireBody(call: Exchange): unknown {
  if (call.body === undefined) throw new HttpError(400, `Send a JSON body (Content-Type: ${JSON_CONTENT_TYPE}).`);
  return call.body;
}

/**
 * Tokens (not in the spec; what proxies and reactors need). Permissions are checked per token
 * against its containers, so the routes declare none.
 */
export const tokenRoutes: readonly Route[] = [
  {
    method: 'POST',
    path: '/tokens',
    summary: 'Create a token.',
    schema: { body: createTokenSchema },
    responses: { 201: { description: 'The token.', schema: tokenAnswerSchema } },
    problems: TRANSACTIONAL,
    handler: async (call, { services }) =>
      json(await services.tokens.create(tokenContext(call), call.body as CreateTokenBody), 201),
  },
  {
    method: 'GET',
    path: '/tokens',
    summary: 'List the tokens the caller may read, a page at a time.',
    schema: { querystring: tokenListQuerySchema },
    responses: { 200: { description: 'A page of tokens.', schema: pageSchema(tokenAnswerSchema) } },
    problems: TRANSACTIONAL,
    handler: (call, { services }) => json(services.tokens.list(tokenContext(call), call.query as TokenListQuery)),
  },
  {
    method: 'GET',
    path: '/tokens/:id',
    summary: 'One token.',
    schema: { params },
    responses: { 200: { description: 'The token, its data as the caller may see it.', schema: tokenAnswerSchema } },
    problems: TRANSACTIONAL,
    handler: (call, { services }) => json(services.tokens.get(tokenContext(call), call.params.id!)),
  },
  {
    method: 'DELETE',
    path: '/tokens/:id',
    summary: 'Delete a token.',
    schema: { params },
    responses: { 204: { description: 'Deleted.' } },
    problems: TRANSACTIONAL,
    handler: async (call, { services }) => {
      await services.tokens.delete(tokenContext(call), call.params.id!);
      return empty(204);
    },
  },
  {
    method: 'POST',
    path: '/tokenize',
    summary: 'Tokenize every value of a JSON document.',
    jsonBody: 'Any JSON document: each value that describes a token (`{ type, data, ... }`) is tokenized.',
    responses: { 201: { description: 'The document with a token in place of each value tokenized.', schema: {} } },
    problems: TRANSACTIONAL,
    handler: async (call, { services }) =>
      json(await services.tokens.tokenize(tokenContext(call), requireBody(call)), 201),
  },
  {
    method: 'POST',
    path: '/detokenize',
    summary: 'Replace the {{ token }} expressions of a JSON document with their data.',
    jsonBody: 'Any JSON document holding `{{ token }}` expressions in its strings.',
    responses: { 200: { description: 'The document with each expression replaced by its data.', schema: {} } },
    problems: TRANSACTIONAL,
    handler: (call, { services }) => json(services.tokens.detokenize(tokenContext(call), requireBody(call))),
  },
];
