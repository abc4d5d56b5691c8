import type { FastifyInstance } from 'fastify';
import { idParamsSchema } from '../../../api/schemas.js';
import type { TransactionService } from '../../services/transactions.js';
import { callerOf } from '../auth.js';

type IdParams = { Params: { id: string } };

/** Spec section 4.2 (Enterprise tier; any valid key, no permission). */
export function transactionRoutes(app: FastifyInstance, transactions: TransactionService): void {
  app.post('/transactions', async (request, reply) =>
    reply.status(201).send(await transactions.create(callerOf(request))),
  );

  app.get<IdParams>('/transactions/:id', { schema: { params: idParamsSchema } }, async (request) =>
    transactions.get(callerOf(request), request.params.id),
  );

  app.post<IdParams>('/transactions/:id/commit', { schema: { params: idParamsSchema } }, async (request, reply) => {
    await transactions.commit(callerOf(request), request.params.id);
    return reply.status(200).send();
  });

  app.post<IdParams>('/transactions/:id/rollback', { schema: { params: idParamsSchema } }, async (request, reply) => {
    await transactions.rollback(callerOf(request), request.params.id);
    return reply.status(200).send();
  });
}
