import type { ExplainRequest, ExplainResponse, StoredExplanation } from '../api/explanation.js';
import { routeMissingStatus } from './errors.js';
import type { Requester } from './requester.js';

/**
 * The server answered the explanation routes as a server without them does: a 404 or 405 that is no
 * problem of the svc API (a web page, another API's JSON), or the svc emulator's own "No route"
 * (a version from before issue 30). An unknown trace id is the svc API's 404 and stays an ApiError.
 */
export class ExplanationsUnavailableError extends Error {
  override readonly name = 'ExplanationsUnavailableError';
  constructor(
    readonly url: string,
    readonly status: number,
  ) {
    super(`The server at ${url} offers no explanations (HTTP ${status} on its explanation routes).`);
  }
}

/**
 * Why a request was granted or refused (issue 30), with the management key: the stored decision of
 * a past request by its trace id, and the evaluation of a hypothetical against the tenant's current
 * Applications and tokens.
 */
export class ExplanationsApi {
  constructor(
    private readonly client: Requester,
    private readonly baseUrl: string,
  ) {}

  /** `GET /_emulator/explanations/{trace_id}`. */
  get(traceId: string): Promise<StoredExplanation> {
    const path = `/_emulator/explanations/${encodeURIComponent(traceId)}`;
    return this.call(() => this.client.request<StoredExplanation>('GET', path, { shape: 'object' }));
  }

  /** `POST /_emulator/explain`. */
  explain(body: ExplainRequest): Promise<ExplainResponse> {
    return this.call(() =>
      this.client.request<ExplainResponse>('POST', '/_emulator/explain', { body, shape: 'object' }),
    );
  }

  private async call<T>(send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      const status = routeMissingStatus(error);
      throw status === undefined ? error : new ExplanationsUnavailableError(this.baseUrl, status);
    }
  }
}
