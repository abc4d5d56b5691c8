import type { IncomingHttpHeaders } from 'node:http';
import {
  API_KEY_HEADER,
  PROXY_CONNECTION_HEADER,
  PROXY_HOP_HEADER,
  PROXY_KEEP_ALIVE_HEADER,
  PROXY_KEY_HEADER,
} from '../../api/headers.js';
import { BODY_LIMIT_BYTES } from '../../api/limits.js';
import type { ProxyCall } from '../proxy/pipeline.js';
import { forwardedQuery, pathSuffix } from '../proxy/destination.js';
import { originForm } from './router.js';

/** Bodies of proxy calls are taken as bytes, whatever their type, up to this (BODY_LIMIT_BYTES with a transform). */
export const PROXY_BODY_LIMIT = 10 * BODY_LIMIT_BYTES;

/** A request of `/proxy...` as the pipeline takes it. */
export function proxyCallOf(
  request: {
    method: string;
    url: string;
    headers: IncomingHttpHeaders;
    rawHeaders: readonly string[];
    traceId: string;
  },
  body: unknown,
  observer: Pick<ProxyCall, 'onTenant' | 'onDetokenized'>,
): ProxyCall {
  // The path and query the router matched: an absolute target's authority is no part of the suffix.
  const target = originForm(request.url);
  const { query, proxyKey } = forwardedQuery(target);
  const header = (name: string) => {
    const value = request.headers[name];
    return typeof value === 'string' ? value : undefined;
  };
  return {
    method: request.method,
    suffix: pathSuffix(target),
    query,
    rawHeaders: request.rawHeaders,
    body: Buffer.isBuffer(body) ? body : undefined,
    proxyKey: header(PROXY_KEY_HEADER) ?? proxyKey,
    apiKey: header(API_KEY_HEADER),
    keepAlive: header(PROXY_KEEP_ALIVE_HEADER),
    connection: header(PROXY_CONNECTION_HEADER),
    hop: request.headers[PROXY_HOP_HEADER] !== undefined,
    traceId: request.traceId,
    ...observer,
  };
}
