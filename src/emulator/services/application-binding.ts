import { fieldError } from '../errors.js';
import type { Store } from '../store/store.js';
import type { ApplicationRecord } from '../store/records.js';
import type { Caller } from './applications.js';

/**
 * `application: {id}` on a reactor or proxy must name a public or private Application of the
 * caller's tenant (its permissions are what `req.svc` gets). Anything else is a 400 on that field.
 */
export function bindableApplication(
  store: Store,
  caller: Caller,
  reference: { id: string } | null | undefined,
): ApplicationRecord | undefined {
  if (reference == null) return undefined;
  const application = store.applications.get(caller.tenantId, reference.id.toLowerCase());
  if (!application)
    throw fieldError(`No Application with id ${reference.id}.`, { 'application.id': ['no such Application'] });
  if (application.type !== 'private' && application.type !== 'public') {
    throw fieldError(
      `Application ${reference.id} is a ${application.type} Application; it must be a public or private one.`,
      {
        'application.id': ['must be a public or private Application'],
      },
    );
  }
  return application;
}
