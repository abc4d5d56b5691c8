import type { Reactor, ReactorBody } from '../api/types.js';

/** What a caller wants of a reactor; a field left out is not part of the change. */
export interface ReactorFields {
  name?: string;
  /** The code itself (CommonJS text), not a path. */
  code?: string;
  configuration?: Record<string, string>;
  /** The id of the Application whose permissions `req.svc` gets; `null` unbinds it. */
  applicationId?: string | null;
}

export interface NewReactor extends ReactorFields {
  name: string;
  code: string;
}

/** An RFC 7386 merge patch of a reactor: `null` removes a configuration key or the Application. */
export type ReactorPatch = {
  name?: string;
  code?: string;
  configuration?: Record<string, string | null>;
  application?: { id: string } | null;
};

/** The body of `POST /reactors`; no configuration given is an empty one. */
export function createReactorBody(input: NewReactor): ReactorBody {
  return {
    name: input.name,
    code: input.code,
    configuration: input.configuration ?? {},
    ...(input.applicationId !== undefined && { application: applicationRef(input.applicationId) }),
  };
}

/** The body of `PUT /reactors/{id}`: what `changes` leaves out keeps its current value. */
export function updateReactorBody(current: Reactor, changes: ReactorFields): ReactorBody {
  const applicationId = changes.applicationId === undefined ? (current.application?.id ?? null) : changes.applicationId;
  return {
    name: changes.name ?? current.name,
    code: changes.code ?? current.code,
    configuration: changes.configuration ?? current.configuration,
    application: applicationRef(applicationId),
  };
}

/**
 * The merge patch of `changes`: only what is given. Configuration pairs merge into the current ones;
 * `configuration` (the patch's, with `null` for keys to remove) comes from `configurationPatch`.
 */
export function patchReactorBody(
  changes: Omit<ReactorFields, 'configuration'> & { configuration?: Record<string, string | null> },
): ReactorPatch {
  return {
    ...(changes.name !== undefined && { name: changes.name }),
    ...(changes.code !== undefined && { code: changes.code }),
    ...(changes.configuration !== undefined && { configuration: changes.configuration }),
    ...(changes.applicationId !== undefined && { application: applicationRef(changes.applicationId) }),
  };
}

function applicationRef(id: string | null): { id: string } | null {
  return id === null ? null : { id };
}
