import type { Explanation } from '../../api/explanation.js';
import { HttpError } from '../errors.js';
import { explainAccess, type NamedGrantee } from './access.js';

/** What a 403 refused: the permission, and where (the containers, the token) when it was refused there. */
export interface Denied {
  permission: string;
  containers?: readonly string[];
  token?: string;
}

/**
 * A 403 of an Application that lacks a permission. `denied` says which (and where), for a caller
 * that words the refusal its own way (a reactor's refused tokenize block names whose grants
 * refused it) without reading the detail. Its problem carries the `explanation` (access.ts
 * explainAccess): the rules as evaluated again, now that a refusal is answered.
 */
export class PermissionDenied extends HttpError {
  readonly explanation: Explanation;

  constructor(
    readonly denied: Denied,
    /** The Application refused (its type alone: explained without its rules). */
    application: NamedGrantee | string,
    /** What needs the permission, when the detail says it: "invoking a reactor". */
    needs?: string,
  ) {
    const type = typeof application === 'string' ? application : application.type;
    const explanation: Explanation =
      typeof application === 'string'
        ? { decision: 'denied', reason: lacking(denied), application: null, operation: denied.permission }
        : explainAccess(application, denied.permission, denied.containers, denied.token);
    super(403, `This ${type} Application ${lacking(denied)}${needs ? `, which ${needs} needs` : ''}.`, {
      extensions: { explanation },
    });
    this.explanation = explanation;
  }
}

/** "lacks token:use on /pci/, /pii/ (token 0c...)": what was denied, in the words of a 403's detail. */
export function lacking({ permission, containers, token }: Denied): string {
  const where = containers ? ` on ${containers.join(', ')}` : '';
  return `lacks ${permission}${where}${token === undefined ? '' : ` (token ${token})`}`;
}
