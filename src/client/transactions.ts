import type { Transaction } from '../api/types.js';
import type { Requester } from './requester.js';

/** Spec section 4.2; any valid key will do, the API key is used. */
export class TransactionsApi {
  constructor(private readonly client: Requester) {}

  create(): Promise<Transaction> {
    return this.client.request('POST', '/transactions', { key: 'api' });
  }

  get(id: string): Promise<Transaction> {
    return this.client.request('GET', `/transactions/${encodeURIComponent(id)}`, { key: 'api' });
  }

  commit(id: string): Promise<void> {
    return this.client.request('POST', `/transactions/${encodeURIComponent(id)}/commit`, { key: 'api' });
  }

  rollback(id: string): Promise<void> {
    return this.client.request('POST', `/transactions/${encodeURIComponent(id)}/rollback`, { key: 'api' });
  }
}
