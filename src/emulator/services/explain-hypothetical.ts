/**
 * POST /_emulator/explain: what the tenant's current Applications and tokens would decide for an
 * Application (by id, name or key), a permission, and a token or container.
 */
import type { ExplainRequest, ExplainResponse, Explanation } from '../../api/explanation.js';
import { fieldError, HttpError } from '../errors.js';
import type { ApplicationRecord } from '../store/records.js';
import { explainAccess, normalizeContainer } from './access.js';
import type { ApplicationService, Caller } from './applications.js';
import type { TokenService } from './tokens.js';

export interface HypotheticalDeps {
  applications: ApplicationService;
  tokens: TokenService;
}

export function explainHypothetical(deps: HypotheticalDeps, caller: Caller, body: ExplainRequest): ExplainResponse {
  if ((body.application === undefined) === (body.api_key === undefined))
    throw fieldError('Give exactly one of application and api_key.', {
      application: ['exactly one of application, api_key'],
    });
  if (body.token !== undefined && body.container !== undefined)
    throw fieldError('Give at most one of token and container.', { token: ['at most one of token, container'] });
  const application =
    body.api_key !== undefined ? byKey(deps, caller, body.api_key) : byIdOrName(deps, caller, body.application!);
  if (!application) {
    const explanation: Explanation = {
      decision: 'unauthenticated',
      reason: 'the API key names no Application of this tenant (unknown, regenerated or expired)',
      application: null,
      operation: body.permission,
    };
    return { decision: explanation.decision, explanation };
  }
  let explanation: Explanation;
  if (body.token !== undefined) {
    const containers = deps.tokens.containersOf({ caller }, body.token);
    if (!containers) {
      explanation = {
        decision: 'not_found',
        reason: `token ${body.token} does not exist (or has expired)`,
        application: { id: application.id, name: application.name, type: application.type },
        operation: body.permission,
      };
    } else explanation = explainAccess(application, body.permission, containers, body.token);
  } else if (body.container !== undefined) {
    explanation = explainAccess(application, body.permission, [normalizeContainer(body.container)]);
  } else {
    explanation = explainAccess(application, body.permission);
  }
  return { decision: explanation.decision, explanation };
}

function byKey(deps: HypotheticalDeps, caller: Caller, key: string): ApplicationRecord | undefined {
  const application = deps.applications.authenticate(key);
  return application?.tenant_id === caller.tenantId ? application : undefined;
}

function byIdOrName(deps: HypotheticalDeps, caller: Caller, given: string): ApplicationRecord {
  const found = deps.applications.named(caller, given);
  if (!found) throw new HttpError(404, `No Application with id or name ${given}.`);
  return found;
}
