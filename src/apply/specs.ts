/**
 * Resources in the one normal form the planner compares and hashes (compare.ts): from what the
 * target returns, and from what svc.yaml asks for once Application names are resolved to ids.
 */
import type { Application, Proxy, Reactor } from '../api/types.js';
import { normalizeApplication, type ApplicationSpec, type ProxySpec, type ReactorSpec } from './compare.js';
import type { DesiredApplication, DesiredProxy, DesiredReactor } from './types.js';

/** An Application name of svc.yaml -> the id it has (or a marker for one not created yet). */
export type AppRef = (name: string | null) => string | null;

export function applicationSpec(app: Application): ApplicationSpec {
  return normalizeApplication({ name: app.name, type: app.type, permissions: app.permissions, rules: app.rules });
}

export function reactorSpec(reactor: Reactor): ReactorSpec {
  const { name, code, configuration } = reactor;
  return { name, code, configuration, application: reactor.application?.id ?? null };
}

export function proxySpec(proxy: Proxy): ProxySpec {
  return {
    name: proxy.name,
    destination_url: proxy.destination_url,
    request_transform: proxy.request_transform?.code ?? null,
    response_transform: proxy.response_transform?.code ?? null,
    // The API keeps "no configuration" as null; an empty map means the same to a transform.
    configuration: proxy.configuration ?? {},
    application: proxy.application_id,
    require_auth: proxy.require_auth,
  };
}

export function wantedApplication(app: DesiredApplication): ApplicationSpec {
  return normalizeApplication({ name: app.name, type: app.type, permissions: app.permissions, rules: app.rules });
}

export function wantedReactor(reactor: DesiredReactor, appRef: AppRef): ReactorSpec {
  const { name, configuration } = reactor;
  return { name, code: reactor.code.code, configuration, application: appRef(reactor.application) };
}

export function wantedProxy(proxy: DesiredProxy, appRef: AppRef): ProxySpec {
  return {
    name: proxy.name,
    destination_url: proxy.destination_url,
    request_transform: proxy.request_transform?.code ?? null,
    response_transform: proxy.response_transform?.code ?? null,
    configuration: proxy.configuration ?? {},
    application: appRef(proxy.application),
    require_auth: proxy.require_auth,
  };
}
