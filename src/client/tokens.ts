import { TRANSACTION_HEADER } from '../api/headers.js';
import type { CreateTokenBody, Page, Token, TokenListQuery } from '../api/types.js';
import type { RequestOptions, Requester } from './requester.js';

/** Token calls use the API key; `transaction` sends `SVC-TRANSACTION-ID`. */
export class TokensApi {
  constructor(private readonly client: Requester) {}

  private options(transaction: string | undefined, rest: RequestOptions = {}): RequestOptions {
    return {
      key: 'api',
      ...rest,
      ...(transaction !== undefined && { headers: { [TRANSACTION_HEADER]: transaction } }),
    };
  }

  create(body: CreateTokenBody, transaction?: string): Promise<Token> {
    return this.client.request('POST', '/tokens', this.options(transaction, { body }));
  }

  get(id: string, transaction?: string): Promise<Token> {
    return this.client.request('GET', `/tokens/${encodeURIComponent(id)}`, this.options(transaction));
  }

  list(query: TokenListQuery = {}, transaction?: string): Promise<Page<Token>> {
    const { page, size, id, container, type } = query;
    return this.client.request(
      'GET',
      '/tokens',
      this.options(transaction, { query: { page, size, id, container, type }, shape: 'page' }),
    );
  }

  delete(id: string, transaction?: string): Promise<void> {
    return this.client.request('DELETE', `/tokens/${encodeURIComponent(id)}`, this.options(transaction));
  }

  tokenize(value: unknown, transaction?: string): Promise<unknown> {
    return this.client.request('POST', '/tokenize', this.options(transaction, { body: value }));
  }

  detokenize(value: unknown): Promise<unknown> {
    return this.client.request('POST', '/detokenize', this.options(undefined, { body: value }));
  }
}
