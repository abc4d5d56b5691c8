import { createTokenSchema, tokenListQuerySchema } from '../../api/schemas.js';
import type { CreateTokenBody, TokenListQuery } from '../../api/types.js';
import { HttpError } from '../errors.js';
import type { SvcHandler, SvcMethod } from '../runtime/index.js';
import { bodyValidator } from '../validation.js';
import type { Caller } from './applications.js';
import type { CallSecrets } from '../leaks/secrets.js';
import type { TokenContext, TokenService } from './tokens.js';

const checkCreate = bodyValidator<CreateTokenBody>(createTokenSchema);
/** What `req.svc` methods write (refused in a re-run). */
const WRITES: ReadonlySet<string> = new Set(['tokens.create', 'tokens.delete', 'tokenize']);
const checkListQuery = bodyValidator<TokenListQuery>(tokenListQuerySchema);

function tokenId(value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new HttpError(400, 'Pass a token id (a string).');
  return value;
}

/**
 * The main-thread side of `req.svc`: each call of user code becomes the same service call an HTTP
 * request with the bound Application's key would make, under the same permission checks. The
 * Application is looked up again on every call (`bound`): one deleted, or whose permissions or
 * rules changed, while the code runs is refused or held to its new grants at once.
 */
export function svcHandler(
  tokens: TokenService,
  bound: () => Caller | undefined,
  owner: string,
  transactionId?: string,
  /** A re-run of a kept call (`svc replay`): nothing is written (tokens.create, tokens.delete, tokenize refused). */
  readOnly = false,
  /** The call's plaintext (leaks/secrets.ts): what req.svc detokenizes is added to it. */
  secrets?: CallSecrets,
): SvcHandler {
  const methods: Record<SvcMethod, (ctx: TokenContext, params: unknown) => unknown> = {
    'tokens.create': (ctx, params) => tokens.create(ctx, checkCreate(params)),
    'tokens.retrieve': (ctx, params) => tokens.get(ctx, tokenId(params)),
    'tokens.delete': async (ctx, params) => {
      await tokens.delete(ctx, tokenId(params));
      return null;
    },
    'tokens.list': (ctx, params) => tokens.list(ctx, checkListQuery(params ?? {})),
    tokenize: (ctx, params) => tokens.tokenize(ctx, params),
    detokenize: (ctx, params) => tokens.detokenize(ctx, params),
  };
  return async (method, params) => {
    const call = methods[method];
    if (!call) throw new HttpError(400, `req.svc has no method ${String(method)}.`);
    if (readOnly && WRITES.has(method))
      throw new HttpError(409, `req.svc.${method} writes: a re-run of a past call (svc replay) writes nothing.`, {
        title: 'Re-run writes nothing',
      });
    const caller = bound();
    if (!caller) throw new HttpError(403, `The Application bound to ${owner} was deleted: req.svc has no grants left.`);
    return call({ caller, transactionId, secrets }, params);
  };
}
