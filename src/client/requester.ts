import type { Page } from '../api/types.js';

/** Which key a call needs: management work, or token and invoke work (spec section 5). */
export type KeyKind = 'management' | 'api';

export interface RequestOptions {
  key?: KeyKind | 'none';
  body?: unknown;
  query?: Record<string, string | number | readonly string[] | undefined>;
  headers?: Record<string, string>;
  /** Content-Type of the JSON body (default application/json). */
  contentType?: string;
  /** What a successful answer must look like: a page of a list, or one object. */
  shape?: 'page' | 'object';
}

/** What the calls of each resource go through: `ApiClient.request`. */
export interface Requester {
  request<T>(method: string, path: string, options?: RequestOptions): Promise<T>;
}

/** Walks a paginated list to its end. */
export async function everyPage<T>(fetchPage: (page: number) => Promise<Page<T>>): Promise<T[]> {
  const items: T[] = [];
  for (let page = 1; ; page++) {
    const result = await fetchPage(page);
    items.push(...result.data);
    if (result.data.length === 0 || page >= result.pagination.total_pages) return items;
  }
}
