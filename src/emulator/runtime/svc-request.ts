/**
 * A `req.svc` request as the emulator reads it from a sandbox and answers it: held to what an HTTP
 * request of the API is before any service sees it, and to the call it belongs to.
 */
import { MAX_DEPTH, exceedsDepth } from '../../lib/json-depth.js';
import { MAX_JSON_KEYS, exceedsKeys } from '../../lib/json-keys.js';
import { megabytes } from '../../lib/megabytes.js';
import type { RpcProblem, SvcMethod, ToSandbox } from './protocol.js';
import type { SvcHandler } from './types.js';
import { UserCodeError } from './user-code-error.js';

/** What a `req.svc` request needs of the call it was made in. */
export interface SvcCall {
  svc: SvcHandler | null;
  svcInFlight: number;
}

type SvcAnswer = Omit<Extract<ToSandbox, { type: 'rpc-result' }>, 'type' | 'id'>;

/**
 * The answer to a `req.svc` request of `call` (undefined: the call is over): the service's value,
 * or the problem refusing it (no Application, too many in flight, over the limits, the service's own).
 */
export async function answerSvc(
  call: SvcCall | undefined,
  method: SvcMethod,
  params: string,
  limits: { maxSvcInFlight: number; maxResultBytes: number },
): Promise<SvcAnswer> {
  try {
    if (!call) throw new UserCodeError(409, 'This invocation is over.');
    if (!call.svc) throw new UserCodeError(403, 'req.svc is not available: no Application is configured.');
    if (call.svcInFlight >= limits.maxSvcInFlight)
      throw new UserCodeError(
        429,
        `Too many req.svc calls in flight (at most ${limits.maxSvcInFlight} per invocation); await them.`,
      );
    const body = svcRequestBody(params, limits.maxResultBytes);
    call.svcInFlight++;
    const value = await call.svc(method, body).finally(() => call.svcInFlight--);
    return { ok: true, value: JSON.stringify(value ?? null) };
  } catch (error) {
    return { ok: false, error: rpcProblem(error) };
  }
}

/**
 * What refused a `req.svc` call, as the problem its HTTP request would have been answered with (an
 * HttpError's members, read as data: the runtime imports no emulator error but its own).
 */
function rpcProblem(error: unknown): RpcProblem {
  const {
    type,
    status = 500,
    title = 'Internal server error',
    detail = 'req.svc failed',
    errors,
    extensions,
  } = error as {
    type?: string;
    status?: number;
    title?: string;
    detail?: string;
    errors?: Record<string, string[]>;
    extensions?: { explanation?: unknown };
  };
  return {
    ...(typeof type === 'string' && { type }),
    title,
    status,
    detail,
    ...(errors && { errors }),
    ...(extensions?.explanation !== undefined && { explanation: extensions.explanation }),
  };
}

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
  if (exceedsKeys(params))
    throw new UserCodeError(
      413,
      `The req.svc request holds more than ${MAX_JSON_KEYS.toLocaleString('en-US')} distinct object keys.`,
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
