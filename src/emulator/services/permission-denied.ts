import { HttpError } from '../errors.js';

/** What a 403 refused: the permission, and where (the containers, the token) when it was refused there. */
export interface Denied {
  permission: string;
  containers?: readonly string[];
  token?: string;
}

/**
 * A 403 of an Application that lacks a permission. `denied` says which (and where), for a caller
 * that words the refusal its own way (a reactor's refused tokenize block names whose grants
 * refused it) without reading the detail.
 */
export class PermissionDenied extends HttpError {
  constructor(
    readonly denied: Denied,
    applicationType: string,
    /** What needs the permission, when the detail says it: "invoking a reactor". */
    needs?: string,
  ) {
    super(403, `This ${applicationType} Application ${lacking(denied)}${needs ? `, which ${needs} needs` : ''}.`);
  }
}

/** "lacks token:use on /pci/, /pii/ (token 0c...)": what was denied, in the words of a 403's detail. */
export function lacking({ permission, containers, token }: Denied): string {
  const where = containers ? ` on ${containers.join(', ')}` : '';
  return `lacks ${permission}${where}${token === undefined ? '' : ` (token ${token})`}`;
}
