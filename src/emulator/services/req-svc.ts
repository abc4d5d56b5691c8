import { createTokenSchema, tokenListQuerySchema } from '../../api/schemas.js';
import type { CreateTokenBody, TokenListQuery } from '../../api/types.js';
import { HttpError } from '../errors.js';
import type { SvcHandler, SvcMethod } from '../runtime/index.js';
import { bodyValidator } from '../validation.js';
import type { Caller } from './applications.js';
import type { TokenContext, TokenService } from './tokens.js';

const checkCreate = bodyValidator<CreateTokenBody>(createTokenSchema);
const checkListQuery = bodyValidator<TokenListQuery>(tokenListQuerySchema);

function tokenId(value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new HttpError(400, 'Pass a token id (a string).');
  return value;
}

/**
 * The main-thread side of `req.svc`: each call of user code becomes the same service call an HTTP
 * request with the bound Application's key would make, under the same permission checks.
 */
export function svcHandler(tokens: TokenService, caller: Caller, transactionId?: string): SvcHandler {
  const ctx: TokenContext = { caller, transactionId };
  const methods: Record<SvcMethod, (params: unknown) => unknown> = {
    'tokens.create': (params) => tokens.create(ctx, checkCreate(params)),
    'tokens.retrieve': (params) => tokens.get(ctx, tokenId(params)),
    'tokens.delete': async (params) => {
      await tokens.delete(ctx, tokenId(params));
      return null;
    },
    'tokens.list': (params) => tokens.list(ctx, checkListQuery(params ?? {})),
    tokenize: (params) => tokens.tokenize(ctx, params),
    detokenize: (params) => tokens.detokenize(ctx, params),
  };
  return async (method, params) => {
    const call = methods[method];
    if (!call) throw new HttpError(400, `req.svc has no method ${String(method)}.`);
    return call(params);
  };
}
