import type { FastifyInstance } from 'fastify';
import {
  idParamsSchema,
  invokeReactorSchema,
  listQuerySchema,
  reactorSchema,
  resultParamsSchema,
} from '../../../api/schemas.js';
import type { InvokeReactorBody, ListQuery, ReactorBody } from '../../../api/types.js';
import type { ReactorService } from '../../services/reactors.js';
import { callerOf, tokenContext } from '../auth.js';
import { requireMergePatch } from '../body.js';
import { sendJson } from '../send.js';

type IdParams = { Params: { id: string } };

/** Spec section 4.4: reactors, their invocation, and (emulator) the results of asynchronous ones. */
export function reactorRoutes(app: FastifyInstance, reactors: ReactorService): void {
  app.post<{ Body: ReactorBody }>(
    '/reactors',
    { schema: { body: reactorSchema }, config: { permission: 'reactor:create' } },
    async (request, reply) => reply.status(201).send(await reactors.create(callerOf(request), request.body)),
  );

  app.get<{ Querystring: ListQuery }>(
    '/reactors',
    { schema: { querystring: listQuerySchema }, config: { permission: 'reactor:read' } },
    async (request) => reactors.list(callerOf(request), request.query),
  );

  app.get<IdParams>(
    '/reactors/:id',
    { schema: { params: idParamsSchema }, config: { permission: 'reactor:read' } },
    async (request) => reactors.get(callerOf(request), request.params.id),
  );

  app.put<IdParams & { Body: ReactorBody }>(
    '/reactors/:id',
    { schema: { params: idParamsSchema, body: reactorSchema }, config: { permission: 'reactor:update' } },
    async (request) => reactors.update(callerOf(request), request.params.id, request.body),
  );

  app.patch<IdParams>(
    '/reactors/:id',
    { schema: { params: idParamsSchema }, config: { permission: 'reactor:update' } },
    async (request, reply) => {
      requireMergePatch(request.headers['content-type']);
      await reactors.patch(callerOf(request), request.params.id, request.body);
      return reply.status(204).send();
    },
  );

  app.delete<IdParams>(
    '/reactors/:id',
    { schema: { params: idParamsSchema }, config: { permission: 'reactor:delete' } },
    async (request, reply) => {
      await reactors.delete(callerOf(request), request.params.id);
      return reply.status(204).send();
    },
  );

  app.post<IdParams & { Body: InvokeReactorBody | null }>(
    '/reactors/:id/react',
    { schema: { params: idParamsSchema, body: invokeReactorSchema } },
    async (request, reply) => {
      const { status, body } = await reactors.invoke(
        tokenContext(request),
        request.params.id,
        request.body ?? {},
        request.id,
      );
      return sendJson(reply, body, status);
    },
  );

  app.get<{ Params: { id: string; request_id: string } }>(
    '/reactors/:id/results/:request_id',
    { schema: { params: resultParamsSchema } },
    async (request) => reactors.result(callerOf(request), request.params.id, request.params.request_id),
  );
}
