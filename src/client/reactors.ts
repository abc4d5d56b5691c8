import { TRACE_HEADER, TRANSACTION_HEADER } from '../api/headers.js';
import type { InvokeReactorBody, Reactor, ReactorBody, ReactorResponse, ReactorResult } from '../api/types.js';
import type { Requester } from './requester.js';
import { ResourceApi } from './resource-api.js';

/** Spec section 4.4: management calls use the management key, invocation the API key. */
export class ReactorsApi extends ResourceApi<Reactor, ReactorBody> {
  constructor(client: Requester) {
    super(client, '/reactors');
  }

  /** 200 with the reactor response, or (with callback_url) 202 `{ id, status: 'pending' }`. */
  /** `traceId` names the call in the server's events (its console lines carry it as their requestId). */
  invoke(
    id: string,
    body: InvokeReactorBody,
    transaction?: string,
    traceId?: string,
  ): Promise<ReactorResponse | { id: string; status: 'pending' }> {
    return this.client.request('POST', `/reactors/${encodeURIComponent(id)}/react`, {
      key: 'api',
      body,
      headers: {
        ...(transaction !== undefined && { [TRANSACTION_HEADER]: transaction }),
        ...(traceId !== undefined && { [TRACE_HEADER]: traceId }),
      },
    });
  }

  result(id: string, requestId: string): Promise<ReactorResult> {
    return this.client.request('GET', `/reactors/${encodeURIComponent(id)}/results/${encodeURIComponent(requestId)}`, {
      key: 'api',
    });
  }
}
