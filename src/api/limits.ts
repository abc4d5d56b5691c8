/** Limits of the API (DESIGN.md section 2): the emulator enforces them, clients may check first. */

/** A request body, a reactor's detokenized args, a transform's payload and a reactor's result: 5 MB. */
export const BODY_LIMIT_BYTES = 5 * 1024 * 1024;
/** How many tokens one reactor invocation may detokenize. */
export const DETOKENIZE_LIMIT = 100;
/**
 * How many `{{ }}` expressions one detokenization may replace (the same token as often as it
 * appears): each is work, and a 50 MB proxy body can hold ten million.
 */
export const DETOKENIZE_EXPRESSION_LIMIT = 10_000;
/** Names of Applications, reactors, proxies and tenants. */
export const MAX_NAME_LENGTH = 200;
/** Custom token ids. */
export const MAX_TOKEN_ID_LENGTH = 200;
/** List pages: `size` from 1 to this, 20 when not given. */
export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;
/** Pages past any real list are refused rather than computed with unsafe numbers. */
export const MAX_PAGE = 1_000_000;

/** The body limit as messages say it. */
export const BODY_LIMIT_LABEL = `${BODY_LIMIT_BYTES / (1024 * 1024)} MB`;

/**
 * Tokens one tokenize creates (POST /tokenize, `req.svc.tokenize`, a reactor's `tokenize` block),
 * and values it may hold in all (the objects, arrays and nulls around the tokens too): the work is
 * per token, so it is bounded where the body limit is not (a 5 MB body holds a million leaves).
 */
export const TOKENIZE_LIMIT = 10_000;
export const TOKENIZE_VALUE_LIMIT = 100_000;
/**
 * What detokenizing may produce (reactor args, POST /detokenize, a proxy body, `req.svc.detokenize`):
 * the payload limit, counted as the output is built, every occurrence of a token included.
 */
export const DETOKENIZED_LIMIT_BYTES = BODY_LIMIT_BYTES;
