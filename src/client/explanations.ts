import type { ExplainRequest, ExplainResponse, StoredExplanation } from '../api/explanation.js';
import { ApiError, UnexpectedResponseError } from './errors.js';
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
      const status = offersNone(error);
      throw status === undefined ? error : new ExplanationsUnavailableError(this.baseUrl, status);
    }
  }
}

/** The status of an answer that says the routes are not there, else undefined. */
function offersNone(error: unknown): number | undefined {
  if (error instanceof UnexpectedResponseError)
    return error.status === 404 || error.status === 405 ? error.status : undefined;
  if (!(error instanceof ApiError) || (error.status !== 404 && error.status !== 405)) return undefined;
  const { problem } = error;
  // The svc API's problems carry their type and the request's trace id; one made up by the client
  // from another server's JSON carries no trace id.
  const svc = problem.type.startsWith('urn:svc:problem:') && problem.trace_id !== undefined;
  const noRoute = problem.detail?.startsWith('No route ') === true;
  return svc && !noRoute ? undefined : error.status;
}
