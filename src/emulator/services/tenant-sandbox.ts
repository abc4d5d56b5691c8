import type { Store } from '../store/store.js';

/**
 * Whose sandbox processes run a tenant's code: its own, or for a fork (svc/testing) its template's,
 * where each version still gets a Compartment, and so module state, of its own.
 */
export function sandboxGroupOf(store: Store, tenantId: string): string {
  return store.tenants.get(tenantId, tenantId)?.sandbox_group ?? tenantId;
}
