import type { StateDocument, StatePlan } from '../api/state.js';
import type { Requester } from './requester.js';

/**
 * A tenant's state on the emulator (`/_emulator/state`, management keys, loopback only): what `svc
 * state` and `svc serve --import/--export-on-exit` send and read. The file around it is the CLI's.
 */
export class StateApi {
  constructor(private readonly client: Requester) {}

  /** `GET /_emulator/state`: the tenant's Applications (key hashes), reactors, proxies and tokens, secrets in clear. */
  export(): Promise<StateDocument> {
    return this.client.request<StateDocument>('GET', '/_emulator/state', { shape: 'object' });
  }

  /**
   * `POST /_emulator/state`: the document imported in one write (`replace`: the tenant made equal to
   * it); with `dryRun`, what would change, and nothing changed.
   */
  import(doc: unknown, options: { dryRun?: boolean; replace?: boolean } = {}): Promise<StatePlan> {
    return this.client.request<StatePlan>('POST', '/_emulator/state', {
      body: doc,
      query: { ...(options.dryRun && { dry_run: '1' }), ...(options.replace && { replace: '1' }) },
      shape: 'object',
    });
  }

  /** `DELETE /_emulator/state`: the tenant emptied but for the caller's and the bootstrap Applications. */
  reset(options: { dryRun?: boolean } = {}): Promise<StatePlan> {
    return this.client.request<StatePlan>('DELETE', '/_emulator/state', {
      query: { ...(options.dryRun && { dry_run: '1' }) },
      shape: 'object',
    });
  }
}
