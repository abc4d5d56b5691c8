import { transactionAnswerSchema } from '../../../api/answer-schemas.js';
import { idParamsSchema } from '../../../api/schemas.js';
import { type Route, callerOf, empty, json } from '../route.js';

const params = idParamsSchema;

/** Spec section 4.2 (Enterprise tier; any valid key, no permission). */
export const transactionRoutes: readonly Route[] = [
  {
    method: 'POST',
    path: '/transactions',
    summary: 'Open a transaction.',
    responses: { 201: { description: 'The open transaction.', schema: transactionAnswerSchema } },
    handler: async (call, { services }) => json(await services.transactions.create(callerOf(call)), 201),
  },
  {
    method: 'GET',
    path: '/transactions/:id',
    summary: 'One transaction.',
    schema: { params },
    responses: { 200: { description: 'The transaction.', schema: transactionAnswerSchema } },
    handler: (call, { services }) => json(services.transactions.get(callerOf(call), call.params.id!)),
  },
  {
    method: 'POST',
    path: '/transactions/:id/commit',
    summary: "Commit a transaction's staged writes.",
    schema: { params },
    responses: { 200: { description: 'Committed (no body).' } },
    problems: [409],
    handler: async (call, { services }) => {
      await services.transactions.commit(callerOf(call), call.params.id!);
      return empty(200);
    },
  },
  {
    method: 'POST',
    path: '/transactions/:id/rollback',
    summary: "Drop a transaction's staged writes.",
    schema: { params },
    responses: { 200: { description: 'Rolled back (no body).' } },
    problems: [409],
    handler: async (call, { services }) => {
      await services.transactions.rollback(callerOf(call), call.params.id!);
      return empty(200);
    },
  },
];
