import { randomUUID } from 'node:crypto';
import type { LeakCall } from '../leaks/guard.js';
import { JSON_CONTENT_TYPE } from '../../api/headers.js';
import { BODY_LIMIT_BYTES } from '../../api/limits.js';
import { PROBLEM_TYPES } from '../../api/problem.js';
import { MAX_DEPTH, exceedsDepth } from '../../lib/json-depth.js';
import { HttpError } from '../errors.js';
import type { EmitEvent } from '../events.js';
import type { Instance } from '../runtime/index.js';
import type { ProxyService, TransformKind } from '../services/proxies.js';
import { type CodeCall, invokeCode } from '../services/invocation.js';
import type { TokenService } from '../services/tokens.js';
import type { ApplicationRecord, ProxyRecord } from '../store/records.js';
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
 * The transforms of one proxy call. What they share (the proxy's bound Application and its
 * configuration) is resolved once for the call, when the first transform runs; each runs as a
 * reactor does (services/invocation.ts), reported as an invocation.
 */
export class TransformCalls {
  private shared: Pick<CodeCall, 'bound' | 'configuration'> | undefined;

  constructor(
    private readonly deps: TransformDeps,
    private readonly proxy: ProxyRecord,
    private readonly requestId: string,
    /** A re-run of a kept call (`svc replay`): `req.svc` may not write. */
    private readonly rerun = false,
    /** The caller's Application (its key checked), or null for an anonymous proxy's caller: a refusal's explanation names it. */
    private readonly caller: ApplicationRecord | null = null,
    /** The leak guard's watch of the proxy call (its watch id is what the sandbox knows the call by). */
    private readonly watched?: LeakCall,
  ) {}

  /** The id the sandbox knows the call by: its watch's, or one made for a call not watched. */
  private get watchId(): string {
    this.callWatchId ??= this.watched?.watchId ?? randomUUID();
    return this.callWatchId;
  }
  private callWatchId: string | undefined;

  /**
   * Runs one of the proxy's transforms on `args` (its `req.svc` under the proxy's Application, if
   * it has one); what it returns must be an object (its body and headers).
   */
  run(kind: TransformKind, instance: Instance, args: unknown): Promise<{ body?: unknown; headers?: unknown }> {
    const { deps, proxy } = this;
    this.shared ??= {
      bound: deps.proxies.boundApplication(proxy),
      configuration: deps.proxies.configurationOf(proxy) ?? {},
    };
    const call: CodeCall = {
      kind: 'transform',
      name: `${proxy.name} (${kind})`,
      id: proxy.id,
      tenantId: proxy.tenant_id,
      owner: transformOwner(proxy, kind),
      svcOwner: `proxy ${proxy.name}`,
      instance,
      ...this.shared,
      boundNow: () => deps.proxies.boundApplication(proxy),
      requestId: this.requestId,
      watchId: this.watchId,
      timeoutMs: TRANSFORM_TIMEOUT_MS,
      ...(this.rerun && { rerun: true }),
      caller: this.caller,
    };
    // What the call is revealed stays looked for while this transform's version lives (its module state).
    if (this.watched) deps.tokens.leaks.own(this.watched, instance.id, instance.version);
    return invokeCode(deps, call, args, (value) => {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        throw new HttpError(500, `${transformOwner(proxy, kind)} must return an object with body and headers.`, {
          title: 'Invalid transform result',
          type: PROBLEM_TYPES.userCode,
        });
      }
      return value as { body?: unknown; headers?: unknown };
    });
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
