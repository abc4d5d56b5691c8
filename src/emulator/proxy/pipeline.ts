import { randomUUID } from 'node:crypto';
import {
  PROXY_CONNECTION_HEADER,
  PROXY_DESTINATION_STATUS_HEADER,
  PROXY_KEEP_ALIVE_HEADER,
  PROXY_KEY_HEADER,
  PROXY_KEY_QUERY,
  API_KEY_HEADER,
} from '../../api/headers.js';
import { BODY_LIMIT_LABEL } from '../../api/limits.js';
import type { Tier } from '../../api/tiers.js';
import { HttpError } from '../errors.js';
import type { EmitEvent } from '../events.js';
import { type ApplicationService, type Caller, callerByKey } from '../services/applications.js';
import type { ProxyService } from '../services/proxies.js';
import type { TokenService } from '../services/tokens.js';
import type { ApplicationRecord, ProxyRecord } from '../store/records.js';
import type { CallContext } from '../services/call-context.js';
import type { LeakCall } from '../leaks/guard.js';
import { CallSecrets } from '../leaks/secrets.js';
import { guardedAnswer, watchProxy } from './answer-guard.js';
import { checkedHeaders, withoutOwnedHeaders } from '../user-code-headers.js';
import { type ProxyAnswer, passedThrough, readForTransform } from './answer.js';
import type { OutboundGateway, OutboundResponse } from '../outbound/index.js';
import type { Instance } from '../runtime/index.js';
import { withheldFromAnonymous } from './anonymous-explanation.js';
import { destinationUrl } from './destination.js';
import { detokenizeBody, growthLimit, TRANSFORM_OUTPUT_LIMIT } from './detokenize-body.js';
import {
  forwardableHeaders,
  headerOf,
  isJsonContentType,
  responseHeaders,
  transformHeaders,
} from './forwarded-headers.js';
import { parseJsonOr, serializeBody, TRANSFORM_PAYLOAD_LIMIT, TransformCalls, transformOwner } from './transforms.js';

export type { ProxyAnswer } from './answer.js';

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
  /**
   * A re-run of a kept call (`svc replay`): the proxy and whose permissions detokenize, found by the
   * replay (no keys are kept); its transforms' `req.svc` may not write.
   */
  rerun?: { proxy: ProxyRecord; caller: Caller | CallContext | undefined };
}

/** Who watches a call pass its stages (`svc replay`'s capture, emulator/replay). */
export interface ProxyObserver {
  began(
    call: ProxyCall,
    proxy: ProxyRecord,
    caller: Caller | CallContext | undefined,
    headers: Record<string, string>,
  ): void;
  transformed(traceId: string, kind: 'request' | 'response', value: object): void;
}

export interface PipelineDeps {
  proxies: ProxyService;
  applications: ApplicationService;
  tokens: TokenService;
  tier: Tier;
  emit: EmitEvent;
  /** Where the forward goes out (the emulator's one outbound gateway). */
  gateway: OutboundGateway;
  observer?: ProxyObserver | undefined;
}

/**
 * The invoke pipeline of a pre-configured proxy: find it by key, authenticate (or not), detokenize
 * `{{ token }}` expressions in the body, run the request transform, forward with undici, and run
 * the response transform or stream the destination's answer back. Errors raised here are the
 * proxy's own (the HTTP layer wraps them as `{"proxy_error": ...}`); the destination's answers,
 * whatever their status, carry SVC-PROXY-DESTINATION-STATUS.
 */
export class ProxyPipeline {
  /**
   * The destination of a call with no path suffix and no query, per proxy record: parsed once, as
   * records are replaced on every change. Never changed after (the forwarder only reads it).
   */
  private readonly plainUrls = new WeakMap<ProxyRecord, URL>();
  private readonly configurations = new WeakMap<ProxyRecord, readonly string[]>();

  constructor(private readonly deps: PipelineDeps) {}

  async invoke(call: ProxyCall): Promise<ProxyAnswer> {
    const { leaks } = this.deps.tokens;
    // The leak guard watches the call (its console lines, its code's requests) until it is answered,
    // in every mode: its plaintext is redacted from events and recordings even with the checks off.
    const watched: LeakCall = {
      tenantId: '',
      kind: 'proxy',
      id: '',
      name: '',
      traceId: call.traceId,
      watchId: randomUUID(),
      secrets: new CallSecrets(),
    };
    leaks.open(watched);
    try {
      return await guardedAnswer(leaks, watched, await this.pass(call, watched));
    } catch (error) {
      // Something refused during the call (fail mode) is its answer, whatever its code made of it.
      throw watched.refused ?? error;
    } finally {
      leaks.close(watched);
    }
  }

  private async pass(call: ProxyCall, watched: LeakCall | undefined): Promise<ProxyAnswer> {
    if (call.hop)
      throw new HttpError(508, 'This request came through a proxy of this emulator: a proxy cannot point at /proxy.', {
        title: 'Proxy loop',
      });
    const proxy = call.rerun?.proxy ?? this.findProxy(call.proxyKey);
    call.onTenant?.(proxy.tenant_id);
    const detokenizer = call.rerun ? call.rerun.caller : this.authenticate(proxy, call.apiKey);
    // Refused before any user code runs: a path that would leave the destination, an upgrade.
    const url =
      call.suffix === '' && call.query === ''
        ? this.plainUrl(proxy)
        : destinationUrl(proxy.destination_url, call.suffix, call.query);
    if (watched) watchProxy(watched, proxy, url, detokenizer);
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
    this.deps.observer?.began(call, proxy, detokenizer, headers);
    const contentType = headerOf(headers, 'content-type');
    let body: Buffer | string | undefined = call.body && call.body.length > 0 ? call.body : undefined;
    if (body !== undefined) {
      const limit = transforms.request || transforms.response ? TRANSFORM_OUTPUT_LIMIT : growthLimit(body);
      try {
        body = detokenizeBody(
          this.deps.tokens,
          body,
          contentType,
          detokenizer,
          proxy,
          limit,
          call.onDetokenized,
          watched?.secrets,
        );
      } catch (error) {
        // An anonymous caller holds no key of the tenant: it is not told the bound Application's rules.
        throw proxy.require_auth ? error : withheldFromAnonymous(error);
      }
    }

    // What the call's transforms share (the bound Application, the configuration) is found once.
    const transformCalls = new TransformCalls(
      this.deps,
      proxy,
      call.traceId,
      call.rerun !== undefined,
      callerApplication(proxy, detokenizer),
      watched,
    );
    if (transforms.request) {
      const json = isJsonContentType(contentType);
      const result = await transformCalls.run('request', transforms.request, {
        body: body === undefined ? null : json ? parseJsonOr(body.toString(), 'The request body') : body.toString(),
        headers,
        method: call.method,
        path: call.suffix,
        query: call.query,
      });
      headers = transformHeaders(result.headers, transformOwner(proxy, 'request'));
      body = serializeBody(result.body, headers, proxy, 'request');
      this.deps.observer?.transformed(call.traceId, 'request', { method: call.method, headers, body });
    }

    const response = await this.deps.gateway.send(
      { url, method: call.method, headers, body, keepAlive, connection },
      {
        tenantId: proxy.tenant_id,
        kind: 'proxy',
        id: proxy.id,
        name: proxy.name,
        traceId: call.traceId,
        configuration: this.configurationValues(proxy),
        secrets: watched?.secrets,
      },
    );
    return this.answer(call, proxy, url, response, transforms.response, transformCalls);
  }

  /**
   * The destination's answer as the caller gets it, with SVC-PROXY-DESTINATION-STATUS: through the
   * response transform when there is one and, as on the platform, the answer is a 2xx; any other
   * passes through as the destination gave it (the leak guard still reads it on its way).
   */
  private async answer(
    call: ProxyCall,
    proxy: ProxyRecord,
    url: URL,
    response: OutboundResponse,
    transform: Instance | undefined,
    transformCalls: TransformCalls,
  ): Promise<ProxyAnswer> {
    const destinationStatus = { [PROXY_DESTINATION_STATUS_HEADER]: String(response.status) };
    if (!transform || response.status < 200 || response.status > 299)
      return passedThrough(response, url, destinationStatus);
    const text = await readForTransform(response, url);
    const responseType =
      typeof response.headers['content-type'] === 'string' ? response.headers['content-type'] : undefined;
    const result = await transformCalls.run('response', transform, {
      body: isJsonContentType(responseType) ? parseJsonOr(text, 'The destination answered JSON that', 502) : text,
      headers: responseHeaders(response.headers, false),
    });
    // The answer's trace id and framing stay the emulator's.
    const outHeaders = withoutOwnedHeaders(checkedHeaders(result.headers, transformOwner(proxy, 'response')));
    const outBody = serializeBody(result.body, outHeaders, proxy, 'response');
    this.deps.observer?.transformed(call.traceId, 'response', { headers: outHeaders, body: outBody });
    return {
      status: response.status,
      headers: { ...outHeaders, ...destinationStatus },
      body: outBody === undefined ? undefined : outBody.toString(),
    };
  }

  /** The proxy's configuration values (recordings mask them): opened once per record. */
  private configurationValues(proxy: ProxyRecord): readonly string[] {
    let values = this.configurations.get(proxy);
    if (!values)
      this.configurations.set(proxy, (values = Object.values(this.deps.proxies.configurationOf(proxy) ?? {})));
    return values;
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
  private authenticate(proxy: ProxyRecord, apiKey: string | undefined): Caller | CallContext | undefined {
    if (!proxy.require_auth) {
      const application = proxy.application_id ? this.deps.proxies.boundApplication(proxy) : undefined;
      return application ? { tenantId: proxy.tenant_id, application } : undefined;
    }
    const { application } = callerByKey(
      this.deps.applications,
      apiKey,
      `This proxy requires authentication: send an API key with token:use in ${API_KEY_HEADER.toUpperCase()}.`,
    );
    // A key of another tenant learns nothing of this proxy: the same answer as an unknown key.
    if (application.tenant_id !== proxy.tenant_id) throw new HttpError(404, 'No proxy has this key.');
    // token:use is checked once, here: the context made is what detokenization is given.
    return this.deps.tokens.callContext(
      { caller: { tenantId: application.tenant_id, application } },
      'invoking a proxy',
    );
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
}

/**
 * The Application whose key called a proxy: with require_auth, the one authenticated (a call's
 * context or a re-run's caller); without, none (what detokenizes is the proxy's own Application).
 */
function callerApplication(
  proxy: ProxyRecord,
  detokenizer: Caller | CallContext | undefined,
): ApplicationRecord | null {
  if (!proxy.require_auth || detokenizer === undefined) return null;
  return 'caller' in detokenizer ? detokenizer.caller.application : detokenizer.application;
}
