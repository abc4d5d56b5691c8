import type { FastifyInstance } from 'fastify';
import {
  createApplicationSchema,
  idParamsSchema,
  listQuerySchema,
  updateApplicationSchema,
} from '../../../api/schemas.js';
import type { CreateApplicationBody, ListQuery, UpdateApplicationBody } from '../../../api/types.js';
import type { ApplicationService } from '../../services/applications.js';
import { callerOf } from '../auth.js';

type IdParams = { Params: { id: string } };

/** Spec section 4.1: the seven Applications endpoints. */
export function applicationRoutes(app: FastifyInstance, applications: ApplicationService): void {
  app.post<{ Body: CreateApplicationBody }>(
    '/applications',
    { schema: { body: createApplicationSchema }, config: { permission: 'application:create' } },
    async (request, reply) => reply.status(201).send(await applications.create(callerOf(request), request.body)),
  );

  app.get<{ Querystring: ListQuery }>(
    '/applications',
    { schema: { querystring: listQuerySchema }, config: { permission: 'application:read' } },
    async (request) => applications.list(callerOf(request), request.query),
  );

  // The Application of the key in the request; declared before /:id, and static routes win anyway.
  app.get('/applications/key', { config: { permission: 'application:read' } }, async (request) =>
    applications.get(callerOf(request), callerOf(request).application.id),
  );

  app.get<IdParams>(
    '/applications/:id',
    { schema: { params: idParamsSchema }, config: { permission: 'application:read' } },
    async (request) => applications.get(callerOf(request), request.params.id),
  );

  app.put<IdParams & { Body: UpdateApplicationBody }>(
    '/applications/:id',
    { schema: { params: idParamsSchema, body: updateApplicationSchema }, config: { permission: 'application:update' } },
    async (request) => applications.update(callerOf(request), request.params.id, request.body),
  );

  app.post<IdParams>(
    '/applications/:id/regenerate',
    { schema: { params: idParamsSchema }, config: { permission: 'application:update' } },
    async (request) => applications.regenerate(callerOf(request), request.params.id),
  );

  app.delete<IdParams>(
    '/applications/:id',
    { schema: { params: idParamsSchema }, config: { permission: 'application:delete' } },
    async (request, reply) => {
      await applications.delete(callerOf(request), request.params.id);
      return reply.status(204).send();
    },
  );
}
