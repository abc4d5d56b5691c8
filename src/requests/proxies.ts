import type { Proxy, ProxyBody, ProxyTransform } from '../api/types.js';

/** What a caller wants of a proxy; a field left out is not part of the change. */
export interface ProxyFields {
  name?: string;
  destinationUrl?: string;
  /** The code of the request transform (text, not a path); `null` removes it. */
  requestTransform?: string | null;
  /** The code of the response transform; `null` removes it. */
  responseTransform?: string | null;
  configuration?: Record<string, string>;
  /** The id of the Application for the transforms and anonymous detokenization; `null` unbinds it. */
  applicationId?: string | null;
  requireAuth?: boolean;
}

export interface NewProxy extends ProxyFields {
  name: string;
  destinationUrl: string;
}

/** An RFC 7386 merge patch of a proxy: `null` removes a transform, a configuration key or the Application. */
export type ProxyPatch = {
  name?: string;
  destination_url?: string;
  request_transform?: ProxyTransform | null;
  response_transform?: ProxyTransform | null;
  configuration?: Record<string, string | null>;
  application?: { id: string } | null;
  require_auth?: boolean;
};

/** The body of `POST /proxies`: only what is given (the API's defaults do the rest). */
export function createProxyBody(input: NewProxy): ProxyBody {
  return {
    name: input.name,
    destination_url: input.destinationUrl,
    ...(input.requestTransform !== undefined && { request_transform: transformOf(input.requestTransform) }),
    ...(input.responseTransform !== undefined && { response_transform: transformOf(input.responseTransform) }),
    ...(input.configuration !== undefined && { configuration: input.configuration }),
    ...(input.applicationId !== undefined && { application: applicationRef(input.applicationId) }),
    ...(input.requireAuth !== undefined && { require_auth: input.requireAuth }),
  };
}

/** The body of `PUT /proxies/{id}`: what `changes` leaves out keeps its current value. */
export function updateProxyBody(current: Proxy, changes: ProxyFields): ProxyBody {
  const applicationId = changes.applicationId === undefined ? current.application_id : changes.applicationId;
  return {
    name: changes.name ?? current.name,
    destination_url: changes.destinationUrl ?? current.destination_url,
    request_transform:
      changes.requestTransform === undefined ? current.request_transform : transformOf(changes.requestTransform),
    response_transform:
      changes.responseTransform === undefined ? current.response_transform : transformOf(changes.responseTransform),
    application: applicationRef(applicationId),
    configuration: changes.configuration ?? current.configuration,
    require_auth: changes.requireAuth ?? current.require_auth,
  };
}

/**
 * The merge patch of `changes`: only what is given. `configuration` (the patch's, with `null` for keys
 * to remove) comes from `configurationPatch`.
 */
export function patchProxyBody(
  changes: Omit<ProxyFields, 'configuration'> & { configuration?: Record<string, string | null> },
): ProxyPatch {
  return {
    ...(changes.name !== undefined && { name: changes.name }),
    ...(changes.destinationUrl !== undefined && { destination_url: changes.destinationUrl }),
    ...(changes.requestTransform !== undefined && { request_transform: transformOf(changes.requestTransform) }),
    ...(changes.responseTransform !== undefined && { response_transform: transformOf(changes.responseTransform) }),
    ...(changes.configuration !== undefined && { configuration: changes.configuration }),
    ...(changes.applicationId !== undefined && { application: applicationRef(changes.applicationId) }),
    ...(changes.requireAuth !== undefined && { require_auth: changes.requireAuth }),
  };
}

function transformOf(code: string | null): ProxyTransform | null {
  return code === null ? null : { code };
}

function applicationRef(id: string | null): { id: string } | null {
  return id === null ? null : { id };
}
