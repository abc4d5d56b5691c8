import { JSON_CONTENT_TYPE } from '../../api/headers.js';
import { BODY_LIMIT_BYTES } from '../../api/limits.js';
import { PROBLEM_TYPES } from '../../api/problem.js';
import { MAX_DEPTH, exceedsDepth } from '../../lib/json-depth.js';
import { HttpError } from '../errors.js';
import type { EmitEvent } from '../events.js';
import { checkedCustomResponse } from '../headers.js';
import type { Instance } from '../runtime/index.js';
import type { ProxyService, TransformKind } from '../services/proxies.js';
import { svcHandler } from '../services/req-svc.js';
import type { TokenService } from '../services/tokens.js';
import type { ProxyRecord } from '../store/records.js';
import { headerOf } from './forwarded-headers.js';

/** The payload limit of a proxy with a transform (spec section 8). */
export const TRANSFORM_PAYLOAD_LIMIT = BODY_LIMIT_BYTES;
const TRANSFORM_TIMEOUT_MS = 30_000;

/** What running a proxy's transform needs of the pipeline's parts. */
export interface TransformDeps {
  proxies: ProxyService;
  tokens: TokenService;
  emit: EmitEvent;
}

/**
 * Runs one of a proxy's transforms on `args` (its `req.svc` under the proxy's Application, if it
 * has one), reported as an invocation; what it returns must be an object (its body and headers).
 */
export async function runTransform(
  deps: TransformDeps,
  proxy: ProxyRecord,
  kind: TransformKind,
  instance: Instance,
  requestId: string,
  args: unknown,
): Promise<{ body?: unknown; headers?: unknown }> {
  const started = performance.now();
  const application = proxy.application_id ? deps.proxies.boundApplication(proxy) : undefined;
  const svc = application
    ? svcHandler(
        deps.tokens,
        () => {
          const current = deps.proxies.boundApplication(proxy);
          return current && { tenantId: proxy.tenant_id, application: current };
        },
        `proxy ${proxy.name}`,
      )
    : null;
  const report = (status: number, error?: HttpError, stack?: string) =>
    deps.emit({
      type: 'invocation',
      kind: 'transform',
      name: `${proxy.name} (${kind})`,
      id: proxy.id,
      tenantId: proxy.tenant_id,
      status,
      ms: Math.round((performance.now() - started) * 10) / 10,
      requestId,
      ...(error && { error: `${error.title}: ${error.detail}`, stack }),
    });
  try {
    const { value } = await instance.invoke(
      { args, configuration: deps.proxies.configurationOf(proxy) ?? {} },
      { timeoutMs: TRANSFORM_TIMEOUT_MS, requestId, svc },
    );
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new HttpError(500, `${transformOwner(proxy, kind)} must return an object with body and headers.`, {
        title: 'Invalid transform result',
        type: PROBLEM_TYPES.userCode,
      });
    }
    report(200);
    return value as { body?: unknown; headers?: unknown };
  } catch (thrown) {
    const error = checkedCustomResponse(thrown, transformOwner(proxy, kind));
    report(
      error instanceof HttpError ? error.status : 500,
      error instanceof HttpError ? error : undefined,
      (thrown as { userStack?: string }).userStack,
    );
    throw error;
  }
}

/**
 * JSON for a transform, or the text when it is not JSON. The value crosses into the sandbox as
 * JSON again, so its nesting is bounded: a 400 for the caller's body, a 502 for an answer.
 */
export function parseJsonOr(text: string, what: string, status = 400): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text;
  }
  if (exceedsDepth(value, MAX_DEPTH)) throw new HttpError(status, `${what} is nested deeper than ${MAX_DEPTH} levels.`);
  return value;
}

/** A transform's body: a string as is, anything else as JSON (marked so when no type was set). */
export function serializeBody(
  body: unknown,
  headers: Record<string, string>,
  proxy: ProxyRecord,
  kind: TransformKind,
): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (exceedsDepth(body, MAX_DEPTH)) {
    throw new HttpError(
      400,
      `The ${kind} transform of proxy ${proxy.name} returned a body nested deeper than ${MAX_DEPTH} levels.`,
      {
        title: 'Invalid transform result',
        type: PROBLEM_TYPES.userCode,
      },
    );
  }
  if (headerOf(headers, 'content-type') === undefined) headers['Content-Type'] = JSON_CONTENT_TYPE;
  return JSON.stringify(body);
}

/** Who set a header or threw a response, for the messages that name it. */
export function transformOwner(proxy: ProxyRecord, kind: TransformKind): string {
  return `The ${kind} transform of proxy ${proxy.name}`;
}
