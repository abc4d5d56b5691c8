import { isUtf8 } from 'node:buffer';
import { BODY_LIMIT_BYTES, BODY_LIMIT_LABEL, DETOKENIZED_LIMIT_BYTES } from '../../api/limits.js';
import { MAX_JSON_KEYS, exceedsKeys } from '../../lib/json-keys.js';
import { megabytes } from '../../lib/megabytes.js';
import { HttpError } from '../errors.js';
import type { Caller } from '../services/applications.js';
import { CallContext } from '../services/call-context.js';
import type { CallSecrets } from '../leaks/secrets.js';
import { expressionsIn, type OutputLimit, type TokenService } from '../services/tokens.js';
import type { ProxyRecord } from '../store/records.js';
import { isBinaryContentType, isJsonContentType } from './forwarded-headers.js';
import { TRANSFORM_PAYLOAD_LIMIT } from './transforms.js';

/** A body a transform will read: the payload limit, detokenized too. */
export const TRANSFORM_OUTPUT_LIMIT: OutputLimit = {
  bytes: TRANSFORM_PAYLOAD_LIMIT,
  says: `the ${BODY_LIMIT_LABEL} payload limit of a proxy with a transform`,
};

/**
 * A body only forwarded may be larger than the payload limit (it streams), but detokenizing may
 * add at most that limit to it: a few bytes of expressions never stand for gigabytes.
 */
export function growthLimit(body: Buffer): OutputLimit {
  return {
    bytes: body.length + DETOKENIZED_LIMIT_BYTES,
    says: `${BODY_LIMIT_LABEL} more than the body as sent`,
  };
}

/**
 * `{{ token }}` expressions in the body. A JSON body changes only in the string values that hold
 * expressions; other text is replaced in place; bytes that are not UTF-8 text pass untouched.
 * The detokenized body may take at most `limit` (413), counted as it is built. A caller given as
 * a CallContext (TokenService.callContext: its token:use checked already) is not checked again.
 */
export function detokenizeBody(
  tokens: TokenService,
  body: Buffer,
  contentType: string | undefined,
  caller: Caller | CallContext | undefined,
  proxy: ProxyRecord,
  limit: OutputLimit,
  detokenized: ((count: number) => void) | undefined,
  /** The call's plaintext (leaks/secrets.ts), for an anonymous caller (a CallContext holds its own). */
  secrets?: CallSecrets,
): Buffer | string {
  // Fast path: most bodies hold no expression at all.
  if (body.indexOf('{{') < 0 || isBinaryContentType(contentType)) return body;
  // Detokenizing reads the body whole (a JSON body is parsed): at most the payload limit of it, so that
  // no body within the proxy's 50 MB keeps the emulator busy for every tenant. Larger ones stream as sent.
  if (body.length > BODY_LIMIT_BYTES) {
    throw new HttpError(
      413,
      `A body with {{ }} expressions to detokenize may be at most ${BODY_LIMIT_LABEL} (this one is ${megabytes(body.length)}); larger bodies are forwarded only without expressions.`,
    );
  }
  if (!isUtf8(body)) return body;
  const text = body.toString('utf8');
  // A caller who may not detokenize is refused before any parse, if the body holds an expression at all.
  if (!caller) {
    if (expressionsIn(text).ids.length === 0) return body;
    throw new HttpError(
      403,
      `Anonymous callers of proxy ${proxy.name} can detokenize only through its Application, and it has none.`,
    );
  }
  const ctx = caller instanceof CallContext ? caller : { caller, secrets };
  if (isJsonContentType(contentType)) {
    if (exceedsKeys(text))
      throw new HttpError(
        413,
        `A JSON body to detokenize holds more than ${MAX_JSON_KEYS.toLocaleString('en-US')} distinct object keys.`,
      );
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (parsed !== undefined) {
      const found = expressionsIn(parsed);
      if (found.ids.length === 0) return body;
      const replaced = tokens.detokenizeJsonText(ctx, text, parsed, { found, limit });
      detokenized?.(found.ids.length);
      return replaced;
    }
  }
  const found = expressionsIn(text);
  if (found.ids.length === 0) return body;
  const replaced = tokens.detokenizeText(ctx, text, { found, limit });
  detokenized?.(found.ids.length);
  return replaced;
}
