import { stateDocumentSchema, statePlanSchema } from '../../../api/answer-schemas.js';
import { type StateDocument, StateFormatError, migrateState, stateImportQuerySchema } from '../../../api/state.js';
import type { Caller } from '../../services/applications.js';
import { HttpError } from '../../errors.js';
import type { Exchange } from '../exchange.js';
import { type Route, json, managementCallerOf } from '../route.js';

function managementCaller(call: Exchange): Caller {
  return managementCallerOf(call, "A tenant's state is exported, imported and reset by management Applications only.");
}

function flag(value: unknown): boolean {
  return value === '' || value === '1' || value === 'true';
}

const planAnswer = { description: 'What changed (or, with dry_run, would).', schema: statePlanSchema };

/**
 * The tenant's state (`svc state`): exported with its secrets in clear (loopback, management key),
 * imported (`dry_run`: the plan only; `replace`: the tenant ends equal to the body) and reset.
 */
export const stateRoutes: readonly Route[] = [
  {
    method: 'GET',
    path: '/_emulator/state',
    summary:
      "The tenant's Applications (key hashes), reactors, proxies and tokens as a state document, secrets in clear (management keys, loopback only).",
    admin: true,
    responses: { 200: { description: 'The state document (svc_state 1).', schema: stateDocumentSchema } },
    handler: (call, { services }) => json(services.state.exportState(managementCaller(call).tenantId)),
  },
  {
    method: 'POST',
    path: '/_emulator/state',
    summary:
      'Imports a state document into the tenant in one write: adds and updates, or with replace=1 makes the tenant equal to it; dry_run=1 plans only.',
    schema: { body: stateDocumentSchema, querystring: stateImportQuerySchema },
    admin: true,
    responses: { 200: planAnswer },
    problems: [409, 422],
    handler: async (call, { services }) => {
      const caller = managementCaller(call);
      let doc: StateDocument;
      try {
        doc = migrateState(call.body);
      } catch (error) {
        if (error instanceof StateFormatError) throw new HttpError(422, `The state document ${error.message}.`);
        throw error;
      }
      const query = call.query as { dry_run?: string; replace?: string };
      return json(
        await services.state.importState(caller, doc, { dryRun: flag(query.dry_run), replace: flag(query.replace) }),
      );
    },
  },
  {
    method: 'DELETE',
    path: '/_emulator/state',
    summary:
      "Empties the tenant: every Application but the caller's and the bootstrap ones, reactors, proxies, tokens, transactions, results.",
    schema: { querystring: stateImportQuerySchema },
    admin: true,
    responses: { 200: planAnswer },
    handler: async (call, { services }) =>
      json(await services.state.reset(managementCaller(call), flag((call.query as { dry_run?: string }).dry_run))),
  },
];
