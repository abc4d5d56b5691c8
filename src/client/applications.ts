import { MAX_PAGE_SIZE } from '../api/limits.js';
import type { Application, CreateApplicationBody, ListQuery, Page, UpdateApplicationBody } from '../api/types.js';
import { everyPage, type KeyKind, type Requester } from './requester.js';

/** Spec section 4.1. */
export class ApplicationsApi {
  constructor(private readonly client: Requester) {}

  /** `name` is a wildcard filter the emulator applies (the spec documents it for proxies and reactors). */
  list(query: ListQuery = {}): Promise<Page<Application>> {
    const { page, size, id, name } = query;
    return this.client.request('GET', '/applications', { query: { page, size, id, name }, shape: 'page' });
  }

  get(id: string): Promise<Application> {
    return this.client.request('GET', `/applications/${encodeURIComponent(id)}`, { shape: 'object' });
  }

  /** The Application that owns the key in use (the management key unless told). */
  self(key: KeyKind = 'management'): Promise<Application> {
    return this.client.request('GET', '/applications/key', { key, shape: 'object' });
  }

  create(body: CreateApplicationBody): Promise<Application> {
    return this.client.request('POST', '/applications', { body });
  }

  update(id: string, body: UpdateApplicationBody): Promise<Application> {
    return this.client.request('PUT', `/applications/${encodeURIComponent(id)}`, { body });
  }

  regenerate(id: string): Promise<Application> {
    return this.client.request('POST', `/applications/${encodeURIComponent(id)}/regenerate`);
  }

  delete(id: string): Promise<void> {
    return this.client.request('DELETE', `/applications/${encodeURIComponent(id)}`);
  }

  /** Every page of the list, for resolving names (`name` narrows it where the server filters). */
  all(name?: string): Promise<Application[]> {
    return everyPage((page) => this.list({ page, size: MAX_PAGE_SIZE, name }));
  }
}
