import type { Proxy, ProxyBody } from '../api/types.js';
import type { Requester } from './requester.js';
import { ResourceApi } from './resource-api.js';

/** Spec section 4.3 (management calls; invocation goes through `ApiClient.raw`). */
export class ProxiesApi extends ResourceApi<Proxy, ProxyBody> {
  constructor(client: Requester) {
    super(client, '/proxies');
  }
}
