import { MERGE_PATCH_CONTENT_TYPE } from '../api/headers.js';
import { MAX_PAGE_SIZE } from '../api/limits.js';
import type { ListQuery, Page } from '../api/types.js';
import { everyPage, type Requester } from './requester.js';

/**
 * The management calls reactors and proxies both answer, under the management key: list (and
 * every page of it), get, create, update, merge patch and delete, at `path` (`/reactors`).
 */
export class ResourceApi<T, Body> {
  constructor(
    protected readonly client: Requester,
    private readonly path: string,
  ) {}

  list(query: ListQuery = {}): Promise<Page<T>> {
    return this.client.request('GET', this.path, {
      query: { page: query.page, size: query.size, id: query.id, name: query.name },
      shape: 'page',
    });
  }

  /** Every page of the list, for resolving names (`name` narrows it where the server filters). */
  all(name?: string): Promise<T[]> {
    return everyPage((page) => this.list({ page, size: MAX_PAGE_SIZE, name }));
  }

  get(id: string): Promise<T> {
    return this.client.request('GET', `${this.path}/${encodeURIComponent(id)}`, { shape: 'object' });
  }

  create(body: Body): Promise<T> {
    return this.client.request('POST', this.path, { body });
  }

  update(id: string, body: Body): Promise<T> {
    return this.client.request('PUT', `${this.path}/${encodeURIComponent(id)}`, { body });
  }

  /** An RFC 7386 merge patch; the API answers 204. */
  patch(id: string, patch: Record<string, unknown>): Promise<void> {
    return this.client.request('PATCH', `${this.path}/${encodeURIComponent(id)}`, {
      body: patch,
      contentType: MERGE_PATCH_CONTENT_TYPE,
    });
  }

  delete(id: string): Promise<void> {
    return this.client.request('DELETE', `${this.path}/${encodeURIComponent(id)}`);
  }
}
