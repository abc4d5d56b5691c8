import { isUtf8 } from 'node:buffer';
import type { Readable } from 'node:stream';
import {
  JSON_CONTENT_TYPE,
  PROXY_CONNECTION_HEADER,
  PROXY_DESTINATION_STATUS_HEADER,
  PROXY_KEEP_ALIVE_HEADER,
  PROXY_KEY_HEADER,
  PROXY_KEY_QUERY,
  API_KEY_HEADER,
} from '../../api/headers.js';
import { BODY_LIMIT_BYTES, BODY_LIMIT_LABEL, DETOKENIZED_LIMIT_BYTES } from '../../api/limits.js';
import { PROBLEM_TYPES } from '../../api/problem.js';
import type { Tier } from '../../api/tiers.js';
import { MAX_DEPTH, exceedsDepth } from '../../lib/json-depth.js';
import { HttpError } from '../errors.js';
import type { EmitEvent } from '../events.js';
import type { Instance } from '../runtime/index.js';
import { holdsAnywhere } from '../services/access.js';
import type { ApplicationService, Caller } from '../services/applications.js';
import type { ProxyService, TransformKind } from '../services/proxies.js';
import { svcHandler } from '../services/req-svc.js';
import { expressionsIn, type OutputLimit, type TokenService } from '../services/tokens.js';
import type { ProxyRecord } from '../store/records.js';
import { checkedCustomResponse, checkedHeaders, withoutOwnedHeaders } from '../headers.js';
import { Forwarder, type ForwarderOptions } from './forwarder.js';
import { destinationUrl } from './destination.js';
import {
  forwardableHeaders,
  isBinaryContentType,
  isJsonContentType,
  responseHeaders,
  transformHeaders,
} from './forwarded-headers.js';

/** The payload limit of a proxy with a transform (spec section 8). */
const TRANSFORM_PAYLOAD_LIMIT = BODY_LIMIT_BYTES;

/** A body a transform will read: the payload limit, detokenized too. */
const TRANSFORM_OUTPUT_LIMIT: OutputLimit = {
  bytes: TRANSFORM_PAYLOAD_LIMIT,
  says: `the ${BODY_LIMIT_LABEL} payload limit of a proxy with a transform`,
};

/**
 * A body only forwarded may be larger than the payload limit (it streams), but detokenizing may
 * add at most that limit to it: a few bytes of expressions never stand for gigabytes.
 */
function growthLimit(body: Buffer): OutputLimit {
  return {
    bytes: body.length + DETOKENIZED_LIMIT_BYTES,
    says: `${BODY_LIMIT_LABEL} more than the body as sent`,
  };
}
const TRANSFORM_TIMEOUT_MS = 30_000;
const SMALL_BODY_BYTES = 64 * 1024;

/** One inbound call of `/proxy...`, as the HTTP layer hands it over. */
export interface ProxyCall {
  method: string;
  /** The path after /proxy. */
  suffix: string;
  /** The caller's query without the proxy key, with its `?` (or ''). */
  query: string;
  rawHeaders: readonly string[];
  body: Buffer | undefined;
  proxyKey: string | undefined;
  apiKey: string | undefined;
  keepAlive: string | undefined;
  connection: string | undefined;
  /** Whether it carries the hop header of a call this emulator forwarded. */
  hop: boolean;
  traceId: string;
  /** Told the proxy's tenant once the proxy is found (the request's log line belongs to it). */
  onTenant?: (tenantId: string) => void;
  /** Told how many tokens the body referenced once they are detokenized (the log line counts them). */
  onDetokenized?: (count: number) => void;
}

export interface ProxyAnswer {
  status: number;
  headers: Record<string, string | string[]>;
  /** Streamed straight from the destination unless small or rewritten by a response transform. */
  body: Readable | Buffer | string | undefined;
}

export interface PipelineDeps {
  proxies: ProxyService;
  applications: ApplicationService;
  tokens: TokenService;
  tier: Tier;
  emit: EmitEvent;
  /** Time bounds of forwarding (tests shorten them). */
  forwarder?: ForwarderOptions;
}

/**
 * The invoke pipeline of a pre-configured proxy: find it by key, authenticate (or not), detokenize
 * `{{ token }}` expressions in the body, run the request transform, forward with undici, and run
 * the response transform or stream the destination's answer back. Errors raised here are the
 * proxy's own (the HTTP layer wraps them as `{"proxy_error": ...}`); the destination's answers,
 * whatever their status, carry SVC-PROXY-DESTINATION-STATUS.
 */
export class ProxyPipeline {
  private readonly forwarder: Forwarder;
  /**
   * The destination of a call with no path suffix and no query, per proxy record: parsed once, as
   * records are replaced on every change. Never changed after (the forwarder only reads it).
   */
  private readonly plainUrls = new WeakMap<ProxyRecord, URL>();

  constructor(private readonly deps: PipelineDeps) {
    this.forwarder = new Forwarder(deps.forwarder);
  }

  async invoke(call: ProxyCall): Promise<ProxyAnswer> {
    if (call.hop)
      throw new HttpError(508, 'This request came through a proxy of this emulator: a proxy cannot point at /proxy.', {
        title: 'Proxy loop',
      });
    const proxy = this.findProxy(call.proxyKey);
    call.onTenant?.(proxy.tenant_id);
    const detokenizer = this.authenticate(proxy, call.apiKey);
    // Refused before any user code runs: a path that would leave the destination, an upgrade.
    const url =
      call.suffix === '' && call.query === ''
        ? this.plainUrl(proxy)
        : destinationUrl(proxy.destination_url, call.suffix, call.query);
    const { keepAlive, connection } = this.reservedHeaders(call);
    // Most proxies have no transform: no await (a turn of the microtask queue each) for those.
    const transforms = {
      request: proxy.request_transform ? await this.deps.proxies.transform(proxy, 'request') : undefined,
      response: proxy.response_transform ? await this.deps.proxies.transform(proxy, 'response') : undefined,
    };
    if ((transforms.request || transforms.response) && (call.body?.length ?? 0) > TRANSFORM_PAYLOAD_LIMIT) {
      throw new HttpError(413, `The request body is over the ${BODY_LIMIT_LABEL} limit of a proxy with a transform.`);
    }

    let headers = forwardableHeaders(call.rawHeaders);
    const contentType = headerOf(headers, 'content-type');
    let body: Buffer | string | undefined = call.body && call.body.length > 0 ? call.body : undefined;
    if (body !== undefined) {
      const limit = transforms.request || transforms.response ? TRANSFORM_OUTPUT_LIMIT : growthLimit(body);
      body = this.detokenize(body, contentType, detokenizer, proxy, limit, call.onDetokenized);
    }

    if (transforms.request) {
      const json = isJsonContentType(contentType);
      const result = await this.runTransform(proxy, 'request', transforms.request, call.traceId, {
        body: body === undefined ? null : json ? parseJsonOr(body.toString(), 'The request body') : body.toString(),
        headers,
        method: call.method,
        path: call.suffix,
        query: call.query,
      });
      headers = transformHeaders(result.headers, transformOwner(proxy, 'request'));
      body = serializeBody(result.body, headers, proxy, 'request');
    }

    const response = await this.forwarder.send({
      url,
      method: call.method,
      headers,
      body,
      keepAlive,
      connection,
    });
    const destinationStatus = { [PROXY_DESTINATION_STATUS_HEADER]: String(response.status) };

    if (!transforms.response) {
      const headers = { ...responseHeaders(response.headers, true), ...destinationStatus };
      // A small answer of known length is sent in one piece. Anything else streams through as it
      // comes: an answer without a length may be an event stream that never ends.
      const length = Number(response.headers['content-length']);
      if (Number.isInteger(length) && length <= SMALL_BODY_BYTES) {
        return {
          status: response.status,
          headers,
          body: await readBounded(
            response.body,
            length,
            url,
            `more than the ${length} bytes its Content-Length announced`,
          ),
        };
      }
      return { status: response.status, headers, body: response.body };
    }
    const tooLarge = `more than ${BODY_LIMIT_LABEL}, over the limit of a proxy with a response transform`;
    if (Number(response.headers['content-length']) > TRANSFORM_PAYLOAD_LIMIT) {
      // Announced too large: refused without reading any of it.
      response.body.destroy();
      throw answerTooLarge(url, tooLarge);
    }
    const text = (await readBounded(response.body, TRANSFORM_PAYLOAD_LIMIT, url, tooLarge)).toString('utf8');
    const responseType =
      typeof response.headers['content-type'] === 'string' ? response.headers['content-type'] : undefined;
    const result = await this.runTransform(proxy, 'response', transforms.response, call.traceId, {
      body: isJsonContentType(responseType) ? parseJsonOr(text, 'The destination answered JSON that', 502) : text,
      headers: responseHeaders(response.headers, false),
    });
    // The answer's trace id and framing stay the emulator's.
    const outHeaders = withoutOwnedHeaders(checkedHeaders(result.headers, transformOwner(proxy, 'response')));
    const outBody = serializeBody(result.body, outHeaders, proxy, 'response');
    return {
      status: response.status,
      headers: { ...outHeaders, ...destinationStatus },
      body: outBody === undefined ? undefined : outBody.toString(),
    };
  }

  close(): Promise<void> {
    return this.forwarder.close();
  }

  private plainUrl(proxy: ProxyRecord): URL {
    let url = this.plainUrls.get(proxy);
    if (!url) this.plainUrls.set(proxy, (url = destinationUrl(proxy.destination_url, '', '')));
    return url;
  }

  private findProxy(key: string | undefined): ProxyRecord {
    if (!key)
      throw new HttpError(
        400,
        `Name the proxy with its key: the ${PROXY_KEY_HEADER.toUpperCase()} header or ?${PROXY_KEY_QUERY}=.`,
      );
    const proxy = this.deps.proxies.byKey(key);
    if (!proxy) throw new HttpError(404, 'No proxy has this key.');
    return proxy;
  }

  /**
   * Whose permissions detokenize: with require_auth, the caller's (a key of the proxy's tenant
   * holding token:use); without, the proxy's Application, if it has one.
   */
  private authenticate(proxy: ProxyRecord, apiKey: string | undefined): Caller | undefined {
    if (!proxy.require_auth) {
      const application = proxy.application_id ? this.deps.proxies.boundApplication(proxy) : undefined;
      return application ? { tenantId: proxy.tenant_id, application } : undefined;
    }
    if (!apiKey)
      throw new HttpError(
        401,
        `This proxy requires authentication: send an API key with token:use in ${API_KEY_HEADER.toUpperCase()}.`,
      );
    const application = this.deps.applications.authenticate(apiKey);
    if (!application)
      throw new HttpError(
        401,
        `The API key in ${API_KEY_HEADER.toUpperCase()} is not valid (unknown, regenerated or expired).`,
      );
    // A key of another tenant learns nothing of this proxy: the same answer as an unknown key.
    if (application.tenant_id !== proxy.tenant_id) throw new HttpError(404, 'No proxy has this key.');
    if (!holdsAnywhere(application, 'token:use')) {
      throw new HttpError(403, `This ${application.type} Application lacks token:use, which invoking a proxy needs.`);
    }
    return { tenantId: application.tenant_id, application };
  }

  /**
   * `{{ token }}` expressions in the body. A JSON body changes only in the string values that hold
   * expressions; other text is replaced in place; bytes that are not UTF-8 text pass untouched.
   * The detokenized body may take at most `limit` (413), counted as it is built.
   */
  private detokenize(
    body: Buffer,
    contentType: string | undefined,
    caller: Caller | undefined,
    proxy: ProxyRecord,
    limit: OutputLimit,
    detokenized: ((count: number) => void) | undefined,
  ): Buffer | string {
    // Fast path: most bodies hold no expression at all.
    if (body.indexOf('{{') < 0 || !isUtf8(body) || isBinaryContentType(contentType)) return body;
    const text = body.toString('utf8');
    const ctx = () => {
      if (!caller)
        throw new HttpError(
          403,
          `Anonymous callers of proxy ${proxy.name} can detokenize only through its Application, and it has none.`,
        );
      return { caller };
    };
    if (isJsonContentType(contentType)) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      if (parsed !== undefined) {
        const found = expressionsIn(parsed);
        if (found.ids.length === 0) return body;
        const replaced = this.deps.tokens.detokenizeJsonText(ctx(), text, parsed, { found, limit });
        detokenized?.(found.ids.length);
        return replaced;
      }
    }
    const found = expressionsIn(text);
    if (found.ids.length === 0) return body;
    const replaced = this.deps.tokens.detokenizeText(ctx(), text, { found, limit });
    detokenized?.(found.ids.length);
    return replaced;
  }

  private reservedHeaders(call: ProxyCall): { keepAlive?: string; connection?: string } {
    if (call.keepAlive === undefined && call.connection === undefined) return {};
    if (
      this.deps.tier === 'enterprise' &&
      call.connection?.split(',').some((option) => option.trim().toLowerCase() === 'upgrade')
    ) {
      // An upgraded connection is no longer HTTP: nothing the proxy could detokenize, transform or bound.
      const header = PROXY_CONNECTION_HEADER.toUpperCase();
      throw new HttpError(400, `${header}: upgrade is refused: the proxy does not switch protocols (WebSocket, h2c).`, {
        errors: { [header]: ['must not hold upgrade'] },
      });
    }
    if (this.deps.tier !== 'enterprise') {
      this.deps.emit({
        type: 'warning',
        traceId: call.traceId,
        message: `${PROXY_KEEP_ALIVE_HEADER.toUpperCase()} / ${PROXY_CONNECTION_HEADER.toUpperCase()} are Enterprise-tier headers; dropped on the standard tier.`,
      });
      return {};
    }
    return {
      ...(call.keepAlive !== undefined && { keepAlive: call.keepAlive }),
      ...(call.connection !== undefined && { connection: call.connection }),
    };
  }

  private async runTransform(
    proxy: ProxyRecord,
    kind: TransformKind,
    instance: Instance,
    requestId: string,
    args: unknown,
  ): Promise<{ body?: unknown; headers?: unknown }> {
    const started = performance.now();
    const application = proxy.application_id ? this.deps.proxies.boundApplication(proxy) : undefined;
    const svc = application
      ? svcHandler(
          this.deps.tokens,
          () => {
            const current = this.deps.proxies.boundApplication(proxy);
            return current && { tenantId: proxy.tenant_id, application: current };
          },
          `proxy ${proxy.name}`,
        )
      : null;
    const report = (status: number, error?: HttpError, stack?: string) =>
      this.deps.emit({
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
        { args, configuration: this.deps.proxies.configurationOf(proxy) ?? {} },
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
}

function headerOf(headers: Record<string, string>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

/**
 * JSON for a transform, or the text when it is not JSON. The value crosses into the sandbox as
 * JSON again, so its nesting is bounded: a 400 for the caller's body, a 502 for an answer.
 */
function parseJsonOr(text: string, what: string, status = 400): unknown {
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
function serializeBody(
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
function transformOwner(proxy: ProxyRecord, kind: TransformKind): string {
  return `The ${kind} transform of proxy ${proxy.name}`;
}

/**
 * A destination's answer read whole, never past `limit` bytes: beyond it the read stops (the
 * connection is dropped, so memory does not grow with what the destination sends) and the call
 * is a 502, as is an answer broken off midway.
 */
function readBounded(stream: Readable, limit: number, url: URL, tooLarge: string): Promise<Buffer> {
  // Events rather than an async iterator: a small answer is most calls, and the iterator's promise
  // per chunk is most of the cost of reading one.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      stream.destroy();
      if (error instanceof HttpError) return reject(error);
      const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      reject(
        new HttpError(502, `The destination ${url.origin} broke off its answer: ${reason}.`, {
          title: 'Destination unreachable',
          cause: error,
        }),
      );
    };
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) fail(answerTooLarge(url, tooLarge));
      else chunks.push(chunk);
    });
    stream.once('end', () => {
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks, size));
    });
    stream.once('error', fail);
    // Closed with neither its end nor an error: cut off. Every answer closes after its end: the error
    // (whose stack costs more than the rest of reading a small answer) is made only when it is one.
    stream.once('close', () => {
      if (!settled) fail(Object.assign(new Error('premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    });
  });
}

function answerTooLarge(url: URL, what: string): HttpError {
  return new HttpError(502, `The destination ${url.origin} answered with ${what}.`, {
    title: 'Destination answer too large',
  });
}
