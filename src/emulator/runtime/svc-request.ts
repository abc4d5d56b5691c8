/**
 * A `req.svc` request as the emulator reads it from a sandbox: held to what an HTTP request of the
 * API is, before any service sees it.
 */
import { MAX_DEPTH, exceedsDepth } from '../../lib/json-depth.js';
import { megabytes } from '../../lib/megabytes.js';
import { UserCodeError } from './user-code-error.js';

/**
 * The params of a `req.svc` call: within the payload limit (413), JSON without the keys that poison
 * prototypes, nested at most MAX_DEPTH levels (400).
 */
export function svcRequestBody(params: string, limit: number): unknown {
  if (params.length > limit / 3 && Buffer.byteLength(params) > limit)
    throw new UserCodeError(
      413,
      `The req.svc request is ${megabytes(Buffer.byteLength(params))} of JSON, over the ${megabytes(limit)} limit of a request.`,
    );
  let body: unknown;
  try {
    // Without a backslash (an escape could spell either key), `__proto__` or `constructor`, the
    // text holds neither key: parsed without a reviver, several times faster.
    body = !/\\|__proto__|constructor/.test(params) ? JSON.parse(params) : JSON.parse(params, refusePrototypeKeys);
  } catch {
    throw new UserCodeError(
      400,
      'The req.svc request is not JSON the API accepts (a __proto__ or constructor.prototype key?).',
    );
  }
  if (exceedsDepth(body, MAX_DEPTH))
    throw new UserCodeError(400, `The req.svc request is nested deeper than ${MAX_DEPTH} levels.`);
  return body;
}

/** A JSON.parse reviver refusing `__proto__` and `constructor.prototype`, as the HTTP body parser does. */
function refusePrototypeKeys(key: string, value: unknown): unknown {
  if (
    key === '__proto__' ||
    (key === 'constructor' && typeof value === 'object' && value !== null && 'prototype' in value)
  )
    throw new Error('prototype key');
  return value;
}
